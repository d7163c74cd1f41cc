package usecase

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

// TestLookupStageOldCheckout: a checkout from before the stage roster (its
// run_suite.py names its suites in PER_COMMIT_SUITES, none a roster stage)
// gets an error that says so, not an empty list to pick from.
func TestLookupStageOldCheckout(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, filepath.FromSlash(policy.RunSuiteFile))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "PER_COMMIT_SUITES = {\n    HWBackend.CUDA: [\"stage-b-sglang-1-gpu\", \"stage-c-megatron-8-gpu\"],\n}\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tables, err := Tables(Inputs{Repo: root})
	if err != nil {
		t.Fatal(err)
	}
	want := `unknown stage "stage-c-4-gpu-h200": the checkout has no stage miles-ci can run, since none of its suites [stage-b-sglang-1-gpu stage-c-megatron-8-gpu] (tests/ci/run_suite.py:1) is a stage of the roster (built-in); its tests/ci predates the stage jobs of rules §1, so check out a Miles commit that has them`
	if _, err := LookupStage(tables, "stage-c-4-gpu-h200"); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}
