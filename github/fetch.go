package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Request names a pull request to read and says how to reach GitHub: what
// `--pr N [--github-repo owner/name]` gives, in both the miles-ci command
// and the Dagger module.
type Request struct {
	// Repo is the base repository, owner/name ("" = DefaultRepo).
	Repo string
	// Number is the pull request number.
	Number int
	// EventPath is an Actions event payload (GITHUB_EVENT_PATH, "" = none);
	// when it is this pull request, its facts are read from it, not the API.
	EventPath string
	// Files asks for the changed files too (one more request per 100 files).
	Files bool
	// Options say how to reach the API: its URL and the token.
	Options Options
}

// RepoName is the repository the request reads: Repo, or DefaultRepo.
func (r Request) RepoName() string {
	if r.Repo == "" {
		return DefaultRepo
	}
	return r.Repo
}

// Fetch reads a pull request's trigger facts. The event payload at
// EventPath gives them when it is the same pull request (then only the
// changed files, when asked for, come from the API); otherwise the API does.
// The token only ever travels in a request header: no error names it.
func Fetch(ctx context.Context, r Request) (*PR, error) {
	if r.Number <= 0 {
		return nil, errors.New("--pr needs a pull request number above 0, e.g. --pr 2874")
	}
	repo := r.RepoName()
	if _, _, err := ParseRepo(repo); err != nil {
		return nil, err
	}
	var pr *PR
	if r.EventPath != "" {
		ev, err := ReadEvent(r.EventPath)
		if err != nil {
			return nil, err
		}
		if ev != nil && ev.Number == r.Number && strings.EqualFold(ev.Repo, repo) {
			pr = ev
		}
	}
	if pr != nil && !r.Files {
		return pr, nil
	}
	c, err := NewClient(r.Options)
	if err != nil {
		return nil, err
	}
	if pr == nil {
		if pr, err = c.GetPR(ctx, repo, r.Number); err != nil {
			return nil, err
		}
	}
	if r.Files {
		if pr.Files, err = c.ListFiles(ctx, repo, r.Number); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// ErrRepoWithoutPR is --github-repo given without --pr.
var ErrRepoWithoutPR = errors.New("--github-repo names the repository of --pr; give --pr N too")

// CheckArgs checks the --pr arguments of the Dagger module before anything
// is asked: a number (0 = none), and a repository and API URL only with it.
func CheckArgs(number int, repo, apiURL string) error {
	switch {
	case number < 0:
		return fmt.Errorf("--pr %d is not a pull request number; give the number, e.g. --pr 2874", number)
	case number == 0 && repo != "":
		return ErrRepoWithoutPR
	case number == 0 && apiURL != "":
		return errors.New("--github-api-url names the API --pr is read from; give --pr N too")
	case repo != "":
		_, _, err := ParseRepo(repo)
		return err
	}
	return nil
}

// Encode renders the PR's facts as JSON, to carry them from one call to the
// next (the Dagger module keeps them in an object's field).
func (p *PR) Encode() (string, error) {
	data, err := json.Marshal(p)
	return string(data), err
}

// DecodePR reads facts Encode wrote, checking them again.
func DecodePR(s string) (*PR, error) {
	var p PR
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("the pull request's facts do not decode: %w", err)
	}
	if p.Number <= 0 {
		return nil, errors.New("the pull request's facts name no pull request")
	}
	return &p, p.check()
}
