package resultsdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	root := t.TempDir()
	checkout := filepath.Join(root, "work", "miles")
	home := filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(checkout, ".git"), home, filepath.Join(root, "old"), filepath.Join(root, "empty"), filepath.Join(root, "mine")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "mine", "notes.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(checkout, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(root, "old", Marker), []byte(MarkerText), 0o644)
	os.WriteFile(filepath.Join(root, "old", "run.log"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o644)
	os.Symlink(filepath.Join(root, "old"), filepath.Join(root, "link"))
	os.Symlink(checkout, filepath.Join(root, "checkout-link"))
	t.Chdir(checkout)
	for _, tc := range []struct {
		name, dir string
		want      string // "" = allowed
	}{
		{"new", filepath.Join(root, "new"), ""},
		{"empty", filepath.Join(root, "empty"), ""},
		{"an earlier run's", filepath.Join(root, "old"), ""},
		{"inside the checkout", "results", ""},
		{"dot", ".", "names the current folder"},
		{"dot slash", "./", "names the current folder"},
		{"dot dot", "..", "names the current folder or one above"},
		{"dot dot deep", "../..", "names the current folder or one above"},
		{"sub dot dot", "results/..", "names the current folder"},
		{"root", "/", "the root of the file system"},
		{"home", home, "is the home folder"},
		{"parent of home", root, "is the home folder"},
		{"the checkout", checkout, "is the checkout"},
		{"the checkout through a link", filepath.Join(root, "checkout-link"), "is the checkout"},
		{"the checkout's parent", filepath.Join(root, "work"), "is the checkout"},
		{"not made by miles-ci", filepath.Join(root, "mine"), "a folder miles-ci did not make"},
		{"the checkout's .git", filepath.Join(checkout, ".git"), "a folder miles-ci did not make"},
		{"a file", filepath.Join(root, "file"), "is not a folder"},
		{"a symlink", filepath.Join(root, "link"), "is a symlink"},
		{"no parent", filepath.Join(root, "nope", "r"), "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.dir, checkout, home)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("wanted %s allowed, got %v", tc.dir, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("wanted an error with %q, got %v", tc.want, err)
			}
		})
	}
}
