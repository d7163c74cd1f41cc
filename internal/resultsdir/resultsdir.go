// Package resultsdir decides whether a folder may be replaced by a run's
// results (`--results DIR`): only a folder miles-ci made (it holds Marker),
// an empty one or none, and never the checkout, a folder holding it, the
// file system's root, the home folder or a path spelled "." or "..". The
// check runs before the run, so a refused folder costs nothing.
package resultsdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Marker is the file every results folder miles-ci writes holds; a
// non-empty folder without it is not miles-ci's to replace.
const Marker = ".miles-ci-results"

// MarkerText is Marker's contents.
const MarkerText = "a results folder written by miles-ci; `miles-ci run --results` replaces this folder as a whole\n"

// Check says whether dir may be replaced by a run's results; checkout is the
// Miles checkout the run uploads and home the user's home folder ("" when
// unknown). Paths are compared after symlinks are resolved.
func Check(dir, checkout, home string) error {
	clean := filepath.Clean(dir)
	if base := filepath.Base(clean); clean == "." || base == ".." || base == "." {
		return fmt.Errorf("--results %s names the current folder or one above it; give a folder of its own for the results, e.g. --results results", dir)
	}
	parent := filepath.Dir(clean)
	if info, err := os.Stat(parent); err != nil || !info.IsDir() {
		return fmt.Errorf("--results %s: its folder %s does not exist; create it or give another path", dir, parent)
	}
	abs, err := real(clean)
	if err != nil {
		return fmt.Errorf("--results %s: %w", dir, err)
	}
	if abs == filepath.Dir(abs) {
		return fmt.Errorf("--results %s is the root of the file system; give a folder of its own for the results", dir)
	}
	if home != "" {
		if h, err := real(home); err == nil && within(h, abs) {
			return fmt.Errorf("--results %s is the home folder %s or holds it; give a folder of its own for the results", dir, h)
		}
	}
	if checkout != "" {
		if c, err := real(checkout); err == nil && within(c, abs) {
			return fmt.Errorf("--results %s is the checkout %s or holds it, which the results would replace; give a folder of its own for the results", dir, c)
		}
	}
	info, err := os.Lstat(clean)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--results %s: %w", dir, err)
	case info.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("--results %s is a symlink; miles-ci replaces the results folder as a whole and follows no link, so give the folder itself", dir)
	case !info.IsDir():
		return fmt.Errorf("--results %s is not a folder; give a folder (it is replaced as a whole) or a path that does not exist", dir)
	}
	entries, err := os.ReadDir(clean)
	if err != nil {
		return fmt.Errorf("--results %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	if m, err := os.Lstat(filepath.Join(clean, Marker)); err == nil && m.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("--results %s is a folder miles-ci did not make (it is not empty and has no %s); miles-ci replaces the results folder as a whole, so give a new or empty folder, or an earlier run's results", dir, Marker)
}

// real is path made absolute with its symlinks resolved; a path that does
// not exist yet is its resolved folder joined with its name.
func real(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, nil
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(abs)), nil
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}
