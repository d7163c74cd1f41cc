package atomicwrite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func files(t *testing.T) (string, []File) {
	dir := t.TempDir()
	var out []File
	for _, n := range []string{"a.py", "b.py", "c.py"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("old "+n), 0o640); err != nil {
			t.Fatal(err)
		}
		out = append(out, File{Path: p, Data: []byte("new " + n)})
	}
	return dir, out
}

// left says each file's content and what else the folder holds.
func left(t *testing.T, dir string) string {
	entries, _ := os.ReadDir(dir)
	var b strings.Builder
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + "=" + string(data) + ";")
	}
	return b.String()
}

func TestReplace(t *testing.T) {
	dir, fs := files(t)
	if err := Replace(fs); err != nil {
		t.Fatal(err)
	}
	if got, want := left(t, dir), "a.py=new a.py;b.py=new b.py;c.py=new c.py;"; got != want {
		t.Errorf("wanted %q, got %q", want, got)
	}
	if info, _ := os.Stat(fs[0].Path); info.Mode().Perm() != 0o640 {
		t.Errorf("wanted the mode kept, got %v", info.Mode())
	}
}

// TestReplaceIsAllOrNothing: a failure at any step (the second file's
// temporary, a full disk, a rename half way) leaves every file as it was
// and no temporary behind (issue 31: the first file stayed rewritten, and
// a full disk truncated the one being written).
func TestReplaceIsAllOrNothing(t *testing.T) {
	full := errors.New("no space left on device")
	for _, tc := range []struct {
		name string
		fail func(t *testing.T)
	}{
		{"second temporary", func(t *testing.T) {
			n := 0
			old := createTemp
			t.Cleanup(func() { createTemp = old })
			createTemp = func(dir, pattern string) (*os.File, error) {
				if n++; n == 2 {
					return nil, full
				}
				return old(dir, pattern)
			}
		}},
		{"full disk", func(t *testing.T) {
			n := 0
			old := createTemp
			t.Cleanup(func() { createTemp = old })
			createTemp = func(dir, pattern string) (*os.File, error) {
				f, err := old(dir, pattern)
				if n++; n == 3 && err == nil {
					f.Close() // its writes now fail, as on a full disk
				}
				return f, err
			}
		}},
		{"third rename", func(t *testing.T) {
			n := 0
			old := rename
			t.Cleanup(func() { rename = old })
			rename = func(from, to string) error {
				if n++; n == 3 {
					return full
				}
				return old(from, to)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, fs := files(t)
			tc.fail(t)
			if err := Replace(fs); err == nil || !strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("wanted the failure to say nothing changed, got %v", err)
			}
			if got, want := left(t, dir), "a.py=old a.py;b.py=old b.py;c.py=old c.py;"; got != want {
				t.Errorf("wanted every file as it was and no temporary, got %q", got)
			}
		})
	}
}
