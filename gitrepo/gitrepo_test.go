package gitrepo

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
)

func TestHead(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"a detached head", map[string]string{".git/HEAD": sha + "\n"}, sha},
		{"a branch's own ref file", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": sha + "\n"}, sha},
		{"a packed ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/packed-refs": "# pack-refs with: peeled\n" + sha + " refs/heads/main\n"}, sha},
		{"a ref that is nowhere", map[string]string{".git/HEAD": "ref: refs/heads/gone\n"}, ""},
		{"no .git", map[string]string{"README.md": "x"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, text := range tc.files {
				testfiles.Write(t, root, filepath.FromSlash(rel), text)
			}
			if got, err := (Local{}).Head(context.Background(), root); got != tc.want || err != nil {
				t.Errorf("wanted %q, got %q (%v)", tc.want, got, err)
			}
		})
	}
}
