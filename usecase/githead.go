package usecase

import (
	"path/filepath"
	"strings"

	"github.com/radixark/miles-ci/internal/fsinput"
)

// GitHead is the commit checked out at repo, read from .git (HEAD, then
// the ref's file or packed-refs); "" when it cannot be read.
func GitHead(repo string) string {
	read := func(name string) string {
		data, err := fsinput.ReadFile(filepath.Join(repo, ".git", name), fsinput.Kind{Name: "a git ref", Max: 1 << 20})
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(data))
	}
	head := read("HEAD")
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return head
	}
	if sha := read(filepath.FromSlash(ref)); sha != "" {
		return sha
	}
	for _, line := range strings.Split(read("packed-refs"), "\n") {
		if sha, name, ok := strings.Cut(line, " "); ok && name == ref {
			return sha
		}
	}
	return ""
}
