package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
)

// TestNoRunLeavesNoFolder: a run given no --results that ends before it
// runs (a refused flag, an engine it cannot reach) leaves no empty folder
// under ./miles-ci-results, nor that folder where it made it; a folder
// that was there before, or that holds anything, stays.
func TestNoRunLeavesNoFolder(t *testing.T) {
	fakeCIEngine(t, nil)
	ciConnect = func(context.Context, engine.Inputs, io.Writer) (ciSession, error) {
		return nil, errors.New("connecting to a Dagger engine: refused")
	}
	old := resultsRoot
	t.Cleanup(func() { resultsRoot = old })
	noSummary := filepath.Join(t.TempDir(), "gone", "summary.md")
	tests := []struct {
		name string
		args []string
	}{
		{"ci, no engine", []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--gpus", "none", "--quiet"}},
		{"run, refused flag", []string{"run", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--gpus", "none", "--quiet", "--github-step-summary", noSummary}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resultsRoot = filepath.Join(t.TempDir(), "miles-ci-results")
			if code, stdout, stderr := runCLI(t, nil, tt.args...); code == 0 {
				t.Fatalf("wanted the run refused, got exit 0\n%s\n%s", stdout, stderr)
			}
			if _, err := os.Stat(resultsRoot); !os.IsNotExist(err) {
				t.Errorf("wanted no %s left, got %v", resultsRoot, err)
			}
			// A folder there before stays, with what it holds.
			kept := filepath.Join(resultsRoot, "earlier")
			os.MkdirAll(kept, 0o755)
			if code, _, _ := runCLI(t, nil, tt.args...); code == 0 {
				t.Fatal("wanted the run refused, got exit 0")
			}
			if entries, err := os.ReadDir(resultsRoot); err != nil || len(entries) != 1 || entries[0].Name() != "earlier" {
				t.Errorf("wanted only %s left, got %v %v", kept, entries, err)
			}
		})
	}
}
