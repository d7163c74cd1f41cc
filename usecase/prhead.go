package usecase

import (
	"context"
	"fmt"

	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/fsinput"
)

// PRHeadRequest asks whether a checkout is the pull request --pr names:
// every command that takes --pr plans, runs or triages the checkout's own
// tests with the PR's facts, so the two must be one commit.
type PRHeadRequest struct {
	// Repo is the checkout ("" = the current folder).
	Repo string
	// PR is the pull request read from GitHub.
	PR *github.PR
	// AllowOtherHead takes a checkout at another commit as it is
	// (--allow-other-head), with a warning instead of an error.
	AllowOtherHead bool
	// Flag names the way out in messages (usecase.CLI: --allow-other-head).
	Flag string
	// Git reads the checkout's HEAD (nil: it cannot be read).
	Git Git
}

// CheckPRHead compares the checkout's HEAD (as r.Git reads it) with
// the pull request's head commit and GitHub's merge of it into the base
// (refs/pull/N/merge, what a pull_request workflow checks out). Either one
// is the PR. Any other commit is an error naming both and the git commands
// that check the PR out, unless AllowOtherHead. A folder whose HEAD cannot
// be read (no .git: an exported source, a tarball, testdata) cannot be
// checked: a notice says so and the command goes on with the folder as it is.
func CheckPRHead(r PRHeadRequest) ([]Message, error) {
	pr := r.PR
	if pr == nil || pr.HeadSHA == "" {
		return nil, nil
	}
	name := fsinput.FolderName(r.Repo)
	head := ""
	if r.Git != nil {
		head, _ = r.Git.Head(context.Background(), r.Repo)
	}
	if head == "" {
		return []Message{PRHeadUnchecked(pr, name+" has no readable .git")}, nil
	}
	if head == pr.HeadSHA || (pr.MergeSHA != "" && head == pr.MergeSHA) {
		return nil, nil
	}
	at := "head " + short(pr.HeadSHA)
	if pr.MergeSHA != "" {
		base := pr.BaseRef
		if base == "" {
			base = "its base"
		}
		at += " nor its merge into " + base + " " + short(pr.MergeSHA)
	}
	flag := r.Flag
	if flag == "" {
		flag = "--allow-other-head"
	}
	if r.AllowOtherHead {
		return []Message{Warning(fmt.Sprintf("--pr %d: %s is at %s, not %s's %s; %s takes its tests as they are, with the pull request's facts",
			pr.Number, name, short(head), pr.Ref(), at, flag))}, nil
	}
	return nil, fmt.Errorf("--pr %d: %s is at %s, not %s's %s, so its tests are not the pull request's; check the pull request out (git fetch origin pull/%d/head && git checkout FETCH_HEAD), or give %s to take this checkout as it is",
		pr.Number, name, short(head), pr.Ref(), at, pr.Number, flag)
}

// PRHeadUnchecked is the notice of a checkout whose HEAD cannot be read, so
// that it cannot be checked against the pull request (why: "DIR has no
// readable .git", or the module's source, which leaves .git out).
func PRHeadUnchecked(pr *github.PR, why string) Message {
	return Notice(fmt.Sprintf("--pr %d: %s, so miles-ci cannot check that it is %s's head %s; it takes the folder as it is",
		pr.Number, why, pr.Ref(), short(pr.HeadSHA)))
}
