// Package testfiles holds the file helpers every package's tests share:
// writing a tree of files below a test's temporary folder, copying one, and
// comparing an output with its golden file under testdata/, and skipping a
// test that needs a python3 this host lacks. Only tests import it.
package testfiles

import (
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// update makes Golden rewrite the golden files instead of comparing:
// go test ./PKG -update.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Write writes content to the '/'-separated path rel below root, creating
// the folders on the way.
func Write(tb testing.TB, root, rel, content string) {
	tb.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// CopyTree copies the folder src to dst (created where missing), following
// links to files as a reader of the tree would.
func CopyTree(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// Golden compares got with the file at path, or rewrites the file with got
// when the tests run with -update.
func Golden(tb testing.TB, path, got string) {
	tb.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if string(want) != got {
		tb.Errorf("%s: wanted\n%s\ngot\n%s", path, want, got)
	}
}

// NeedPython skips a test when no python3 of at least 3.10 (the checkout
// planner's MinPython) is on PATH.
func NeedPython(tb testing.TB) {
	tb.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.version_info >= (3, 10))").Output()
	if err != nil || strings.TrimSpace(string(out)) != "True" {
		tb.Skipf("no python3 >= 3.10 on PATH: %v", err)
	}
}
