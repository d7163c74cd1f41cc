package github

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/fsinput"
)

// MaxEventSize bounds the Actions event payload file; a pull_request payload
// is tens of KiB plus the description.
const MaxEventSize = 8 << 20

// event is the part of an Actions event payload miles-ci reads.
type event struct {
	Action      string `json:"action"`
	Number      int    `json:"number"`
	PullRequest *struct {
		Number       int     `json:"number"`
		Title        string  `json:"title"`
		State        string  `json:"state"`
		Merged       bool    `json:"merged"`
		Body         *string `json:"body"`
		ChangedFiles int     `json:"changed_files"`
		MergeSHA     string  `json:"merge_commit_sha"`
		Labels       []struct {
			Name string `json:"name"`
		} `json:"labels"`
		Head struct {
			SHA  string `json:"sha"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			Ref  string `json:"ref"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"base"`
	} `json:"pull_request"`
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
}

// ParseEvent reads a pull request from an Actions event payload (the file at
// GITHUB_EVENT_PATH). It returns nil and no error for a payload of another
// event (a schedule, a dispatch); the payload holds no changed files, so
// Files stays nil.
func ParseEvent(data []byte) (*PR, error) {
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("the event payload is not JSON: %w; GITHUB_EVENT_PATH must name the file GitHub Actions wrote", err)
	}
	if ev.PullRequest == nil {
		return nil, nil
	}
	pr := ev.PullRequest
	p := &PR{
		Number:       pr.Number,
		Title:        pr.Title,
		State:        pr.State,
		HeadSHA:      pr.Head.SHA,
		MergeSHA:     pr.MergeSHA,
		BaseRef:      pr.Base.Ref,
		ChangedFiles: pr.ChangedFiles,
		Labels:       []string{},
		Source:       "event",
	}
	if p.Number == 0 {
		p.Number = ev.Number
	}
	if p.Number <= 0 {
		return nil, fmt.Errorf("the event payload's pull_request has no number; GITHUB_EVENT_PATH must name the file GitHub Actions wrote")
	}
	if pr.Merged {
		p.State = "merged"
	}
	if pr.Body != nil {
		p.Body = *pr.Body
	}
	for _, l := range pr.Labels {
		p.Labels = append(p.Labels, l.Name)
	}
	switch {
	case pr.Base.Repo != nil:
		p.Repo = pr.Base.Repo.FullName
	case ev.Repository != nil:
		p.Repo = ev.Repository.FullName
	}
	if _, _, err := ParseRepo(p.Repo); err != nil {
		return nil, fmt.Errorf("the event payload names no base repository (%q); GITHUB_EVENT_PATH must name the file GitHub Actions wrote", p.Repo)
	}
	if pr.Head.Repo != nil {
		p.HeadRepo = pr.Head.Repo.FullName
	}
	p.Fork = p.HeadRepo == "" || !strings.EqualFold(p.HeadRepo, p.Repo)
	return p, p.check()
}

// ReadEvent reads and parses the event payload file at path: a regular file
// of at most MaxEventSize bytes (read through fsinput, so a FIFO or device
// there fails at once).
func ReadEvent(path string) (*PR, error) {
	data, err := fsinput.ReadFile(path, fsinput.Kind{Name: fsinput.EventPayload.Name, Max: MaxEventSize})
	if err != nil {
		return nil, fmt.Errorf("GITHUB_EVENT_PATH %w; it must name the file GitHub Actions wrote", err)
	}
	p, err := ParseEvent(data)
	if err != nil {
		return nil, fmt.Errorf("GITHUB_EVENT_PATH %s: %w", path, err)
	}
	return p, nil
}
