// Package github reads a pull request's trigger facts from GitHub: its body,
// labels, head SHA, fork flag and changed files, from the REST API (through
// github.com/google/go-github) or from the Actions event payload. It turns them
// into the facts the rest of miles-ci already takes: a policy.Trigger, a PR
// body and the `git diff --name-status -z -M` bytes of rules §4.
//
// This is the one package of miles-ci that talks to the network; the planning
// packages stay pure and never import it.
package github

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/policy"
)

// DefaultRepo is the repository --pr reads when no other is named.
const DefaultRepo = "radixark/miles"

// MaxChangedFiles is the most files GitHub lists for one pull request; a PR
// that changes more has a list cut short, and rules §4 then fails open.
const MaxChangedFiles = 3000

// PR is what miles-ci needs to know of one pull request.
type PR struct {
	// Repo is the base repository, owner/name.
	Repo string `json:"repo"`
	// Number is the pull request number.
	Number int `json:"number"`
	// Title is the pull request title.
	Title string `json:"title"`
	// State is open, closed or merged.
	State string `json:"state"`
	// Body is the pull request description ("" when it has none).
	Body string `json:"body"`
	// Labels are the label names in GitHub's order.
	Labels []string `json:"labels"`
	// HeadSHA is the commit the pull request's head branch points at.
	HeadSHA string `json:"head_sha"`
	// MergeSHA is GitHub's test merge of the head into the base
	// (merge_commit_sha, refs/pull/N/merge: what a pull_request workflow
	// checks out); "" when GitHub has none (a conflict, or not computed yet).
	MergeSHA string `json:"merge_sha,omitempty"`
	// BaseRef is the branch the pull request merges into, e.g. main.
	BaseRef string `json:"base_ref,omitempty"`
	// HeadRepo is the repository the head branch lives in ("" when it was deleted).
	HeadRepo string `json:"head_repo"`
	// Fork is true when the head branch lives in another repository than the
	// base: such a PR runs without the repository's secrets.
	Fork bool `json:"fork"`
	// ChangedFiles is the number of changed files GitHub counts for the PR.
	ChangedFiles int `json:"changed_files"`
	// Files are the changed files, in GitHub's order; nil when they were not fetched.
	Files []File `json:"files"`
	// Source says where the facts came from: "api" or "event".
	Source string `json:"source"`
}

// File is one changed file as GitHub's "list pull request files" reports it.
type File struct {
	// Status is GitHub's word: added, removed, modified, renamed, copied, changed or unchanged.
	Status string `json:"status"`
	// Path is the file's path after the change.
	Path string `json:"path"`
	// PreviousPath is the path before a rename or copy, else "".
	PreviousPath string `json:"previous_path,omitempty"`
	// Changes is the number of changed lines GitHub counts (0 for a pure rename).
	Changes int `json:"changes"`
}

// Ref is the PR as owner/name#N, the form GitHub links.
func (p *PR) Ref() string { return fmt.Sprintf("%s#%d", p.Repo, p.Number) }

// ShortSHA is the first 12 characters of the head SHA.
func (p *PR) ShortSHA() string {
	if len(p.HeadSHA) > 12 {
		return p.HeadSHA[:12]
	}
	return p.HeadSHA
}

// Describe is the one-line account of the PR that every answer for it shows:
// where it stands, where its facts came from and whether it is a fork.
func (p *PR) Describe() string {
	fork := ""
	if p.Fork {
		head := p.HeadRepo
		if head == "" {
			head = "a deleted repository"
		}
		fork = ", a fork PR from " + head + ", so no secrets"
	}
	return fmt.Sprintf("pull request %s at %s (%s, from the %s%s)", p.Ref(), p.ShortSHA(), p.State, p.Source, fork)
}

// LabelsJSON is the labels as the workflow's PR_LABELS_JSON carries them, a
// JSON array of strings.
func (p *PR) LabelsJSON() string {
	labels := p.Labels
	if labels == nil {
		labels = []string{}
	}
	data, _ := json.Marshal(labels) // a []string always encodes
	return string(data)
}

// Trigger is the pull_request trigger of this PR (rules §3).
func (p *PR) Trigger() policy.Trigger {
	return policy.Trigger{Event: policy.EventPullRequest, PRLabelsJSON: p.LabelsJSON()}
}

// FilesCapped reports whether GitHub cut the changed-file list short.
func (p *PR) FilesCapped() bool {
	return p.Files != nil && (len(p.Files) >= MaxChangedFiles || p.ChangedFiles > len(p.Files))
}

// NameStatus renders the changed files as `git diff --name-status -z -M`
// prints them, so stage selection reads the same diff either way. When the
// list is unusable it returns nil and why; rules §4 then fails open (no GPU
// stage is skipped).
func (p *PR) NameStatus() ([]byte, string) {
	if p.Files == nil {
		return nil, "the changed files of " + p.Ref() + " were not fetched"
	}
	if p.FilesCapped() {
		return nil, fmt.Sprintf("%s changes %d files and GitHub lists at most %d, so the diff is incomplete", p.Ref(), max(p.ChangedFiles, len(p.Files)), MaxChangedFiles)
	}
	data, err := NameStatus(p.Files)
	if err != nil {
		return nil, fmt.Sprintf("the changed files of %s: %v", p.Ref(), err)
	}
	return data, ""
}

// NameStatus renders changed files as `git diff --name-status -z -M` output.
// A rename becomes R with its old and new path: GitHub does not report git's
// similarity score, so it is R100 for a rename with no changed line and R050
// (git's -M threshold) otherwise; stage selection reads only the paths. An
// unknown status, an empty path or a path holding NUL is an error.
func NameStatus(files []File) ([]byte, error) {
	var b strings.Builder
	for i, f := range files {
		status, paths := "", []string{f.Path}
		switch f.Status {
		case "added":
			status = "A"
		case "removed":
			status = "D"
		case "modified", "changed":
			status = "M"
		case "renamed", "copied":
			status = "R"
			if f.Status == "copied" {
				status = "C"
			}
			if f.Changes == 0 {
				status += "100"
			} else {
				status += "050"
			}
			paths = []string{f.PreviousPath, f.Path}
		default:
			return nil, fmt.Errorf("file %d (%q): unknown status %q", i+1, f.Path, f.Status)
		}
		for _, p := range paths {
			if p == "" {
				return nil, fmt.Errorf("file %d (%s): a path is empty", i+1, f.Status)
			}
			if strings.IndexByte(p, 0) >= 0 {
				return nil, fmt.Errorf("file %d (%s): the path %q holds a NUL byte", i+1, f.Status, p)
			}
		}
		b.WriteString(status)
		b.WriteByte(0)
		for _, p := range paths {
			b.WriteString(p)
			b.WriteByte(0)
		}
	}
	if len(files) == 0 {
		// git prints nothing for an empty diff; rules §4 reads that as unusable.
		return []byte{}, nil
	}
	return []byte(b.String()), nil
}

var repoName = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9_.-]{1,100}$`)

// ParseRepo checks an owner/name repository and splits it.
func ParseRepo(s string) (owner, name string, err error) {
	if !repoName.MatchString(s) || strings.HasSuffix(s, "/.") || strings.HasSuffix(s, "/..") {
		return "", "", fmt.Errorf("--github-repo %q is not a repository; give owner/name, e.g. %s", s, DefaultRepo)
	}
	owner, name, _ = strings.Cut(s, "/")
	return owner, name, nil
}

var prNumberArg = lazyre.New(`^#?([1-9][0-9]{0,9})$`)

// ParseNumber reads a pull request number (42 or #42).
func ParseNumber(s string) (int, error) {
	m := prNumberArg.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("--pr %q is not a pull request number; give the number, e.g. --pr 2874", s)
	}
	var n int
	fmt.Sscan(m[1], &n)
	return n, nil
}
