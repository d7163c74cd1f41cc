package github

import (
	"context"
	"errors"
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
