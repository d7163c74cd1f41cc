// Package gitrepo reads what a local git checkout says of itself: the
// commit checked out, from its .git folder, and the merge base a triage
// compares with (BaseCheckout). It is infrastructure the command hands the
// use cases as a usecase.Git and a base folder (the module, which sees no
// .git, hands its own), beside the engine adapter and the stores.
package gitrepo

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/radixark/miles-ci/internal/fsinput"
)

// Local is usecase.Git on the checkouts of this machine.
type Local struct{}

// Head is the commit checked out at repo ("" when it cannot be read).
func (Local) Head(_ context.Context, repo string) (string, error) {
	return Head(repo), nil
}

// Head is the commit checked out at repo, read from .git (HEAD, then the
// ref's file or packed-refs), each file bounded; "" when it cannot be read.
// A .git that is a file ("gitdir: DIR", a git worktree's) points at the
// folder holding HEAD, whose commondir holds the shared refs.
func Head(repo string) string {
	if repo == "" {
		repo = "."
	}
	read := func(dir, name string) string {
		data, err := fsinput.ReadFile(filepath.Join(dir, name), fsinput.Kind{Name: "a git ref", Max: 1 << 20})
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(data))
	}
	gitDir := filepath.Join(repo, ".git")
	dirs := []string{gitDir}
	if d, ok := strings.CutPrefix(read(repo, ".git"), "gitdir: "); ok {
		if !filepath.IsAbs(d) {
			d = filepath.Join(repo, d)
		}
		gitDir, dirs = d, []string{d}
		if c := read(d, "commondir"); c != "" {
			if !filepath.IsAbs(c) {
				c = filepath.Join(d, c)
			}
			dirs = append(dirs, c)
		}
	}
	head := read(gitDir, "HEAD")
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return head
	}
	for _, dir := range dirs {
		if sha := read(dir, filepath.FromSlash(ref)); sha != "" {
			return sha
		}
		for _, line := range strings.Split(read(dir, "packed-refs"), "\n") {
			if sha, name, ok := strings.Cut(line, " "); ok && name == ref {
				return sha
			}
		}
	}
	return ""
}
