package usecase

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/stagerun"
)

// TestStageOfCheckoutAheadOfMilesCI: a stage run of a checkout miles-ci
// cannot plan offline (here a GPU test without labels that its own
// ci_register.py accepts) still builds: the container's --list-only is the
// plan, and one note says why.
func TestStageOfCheckoutAheadOfMilesCI(t *testing.T) {
	tree := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, filepath.Join("..", "testdata", "miles"), tree)
	testfiles.Write(t, tree, "tests/ci/ci_register.py",
		"def register_cuda_ci(est_time, suite, *, labels=None, nightly=False, disabled=None):\n    return None\n")
	testfiles.Write(t, tree, "tests/e2e/older/test_no_labels.py",
		"from tests.ci.ci_register import register_cuda_ci\n\nregister_cuda_ci(est_time=60, suite=\"stage-c-4-gpu-h200\")\n")
	shard := 2
	req, err := Stage(Inputs{Repo: tree, Stage: "stage-c-4-gpu-h200", Shard: &shard, Labels: []string{"run-ci-megatron"}})
	if err != nil {
		t.Fatal(err)
	}
	if req.PlanUnavailable == "" || !strings.Contains(req.PlanUnavailable, "tests/e2e/older/test_no_labels.py:3: this checkout's CI accepts register_cuda_ci() without labels") {
		t.Errorf("wanted why the offline plan is unavailable, got %q", req.PlanUnavailable)
	}
	if len(req.Notes) != 1 || !strings.HasSuffix(req.Notes[0], "; the container's own run_suite.py --list-only is the plan") {
		t.Errorf("wanted one note, got %q", req.Notes)
	}
	if req.Plan == nil || req.Plan.Partition == nil || req.Plan.Partition.ID != 1 || req.Plan.Partition.Size != 3 || len(req.Plan.Enabled) != 0 {
		t.Errorf("wanted a plan naming shard 1 of 3 and no files, got %+v", req.Plan)
	}
	spec, err := stagerun.Build(req)
	if err != nil {
		t.Fatal(err)
	}
	if spec.CheckPlan || spec.PlanFromContainer != req.PlanUnavailable || len(spec.Tests) != 0 {
		t.Errorf("wanted no drift check and tests from the container, got check_plan=%t plan_from_container=%q tests=%v", spec.CheckPlan, spec.PlanFromContainer, spec.Tests)
	}
	var plan []string
	for _, s := range spec.Steps {
		if s.Role == stagerun.RolePlan {
			plan = s.Argv
		}
	}
	if !strings.Contains(strings.Join(plan, " "), "run_suite.py --hw cuda --suite stage-c-4-gpu-h200 --auto-partition-id 1 --auto-partition-size 3 --cadence regular --labels run-ci-megatron --list-only") {
		t.Errorf("wanted the container's plan step, got %q", plan)
	}
	if !strings.Contains(spec.Text(), "tests: the container's own run_suite.py --list-only (miles-ci's offline plan was not available") {
		t.Errorf("wanted the spec text to say where the tests come from, got:\n%s", spec.Text())
	}
}

// TestFileOfCheckoutAheadOfMilesCI: a single-file run of such a checkout is
// planned by the checkout's own file_run.
func TestFileOfCheckoutAheadOfMilesCI(t *testing.T) {
	testfiles.NeedPython(t)
	tree := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, filepath.Join("..", "testdata", "miles"), tree)
	testfiles.Write(t, tree, "tests/ci/ci_register.py",
		"def register_cuda_ci(est_time, suite, *, labels=None, nightly=False, disabled=None):\n    return None\n")
	testfiles.Write(t, tree, "tests/e2e/older/test_no_labels.py",
		"from tests.ci.ci_register import register_cuda_ci\n\nregister_cuda_ci(est_time=2000, suite=\"stage-c-4-gpu-h200\")\n")
	// A file_run in the shape of Miles' (written for this test).
	testfiles.Write(t, tree, "tests/ci/file_run.py", `import os
if __name__ == "__main__":
    with open(os.environ["GITHUB_OUTPUT"], "a") as f:
        f.write("hw=cuda\nsuite=stage-c-4-gpu-h200\nruns_on=[\"h200\", \"4gpu\"]\n")
        f.write("container_image=radixark/miles:" + (os.environ.get("CI_IMAGE_TAG") or "dev") + "\ntimeout_seconds=2500\n")
`)
	req, err := File(Inputs{Repo: tree, File: "tests/e2e/older/test_no_labels.py", ImageTag: "pr-9"})
	if err != nil {
		t.Fatal(err)
	}
	fp := req.File
	if fp.HW != "cuda" || fp.Suite != "stage-c-4-gpu-h200" || fp.TimeoutSeconds != 2500 || fp.ContainerImage != "radixark/miles:pr-9" || strings.Join(fp.Command, " ") != "python3 tests/e2e/older/test_no_labels.py" {
		t.Errorf("wanted the checkout's file plan, got %+v", fp)
	}
	if len(req.Notes) != 1 || !strings.Contains(req.Notes[0], "the checkout's own tests/ci/file_run.py planned the file") {
		t.Errorf("wanted one note, got %q", req.Notes)
	}
}
