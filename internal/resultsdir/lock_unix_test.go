//go:build unix

package resultsdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockLeavesNoFile: a run's lock on its results folder is refused to a
// second run while held, and leaves no .NAME.miles-ci-lock file once
// released (issue 40: one was left beside every results folder).
func TestLockLeavesNoFile(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "results")
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(dir); err == nil || !strings.Contains(err.Error(), "is being written by another miles-ci run") {
		t.Errorf("wanted a second lock refused, got %v", err)
	}
	unlock()
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("wanted nothing left beside the folder, got %v", left)
	}
	// A lock file a killed run left is taken and removed.
	os.WriteFile(filepath.Join(parent, ".results.miles-ci-lock"), nil, 0o644)
	unlock, err = Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("wanted the leftover removed, got %v", left)
	}
}
