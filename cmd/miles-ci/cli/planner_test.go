package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
)

// checkoutTree is testdata/miles with a ci_policy main and a file_run of
// miles-ci's own (testdata/verify/shims, answered by testdata/oracle): a
// checkout whose tests/ci code --planner checkout and verify can run.
func checkoutTree(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.version_info >= (3, 10))").Output()
	if err != nil || strings.TrimSpace(string(out)) != "True" {
		t.Skipf("no python3 >= 3.10 on PATH: %v", err)
	}
	tree := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, milesRepo(), tree)
	read := func(p string) []byte {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	shims, ci := filepath.Join("..", "..", "..", "testdata", "verify", "shims"), filepath.Join(tree, "tests", "ci")
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(ci, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("miles_ci_oracle.py", read(filepath.Join("..", "..", "..", "testdata", "oracle", "run_suite_oracle.py")))
	write("file_run.py", read(filepath.Join(shims, "file_run.py")))
	write("ci_policy.py", append(read(filepath.Join(ci, "ci_policy.py")), read(filepath.Join(shims, "ci_policy_main.py"))...))
	return tree
}

func TestPlannerCheckoutGivesTheSameAnswers(t *testing.T) {
	tree := checkoutTree(t)
	for _, args := range [][]string{
		{"plan", "--repo", tree, "--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--labels", "run-ci-megatron", "--auto-partition-id", "1", "--auto-partition-size", "3"},
		{"plan", "--repo", tree, "--hw", "cpu", "--suite", "stage-a-cpu", "--cadence", "nightly", "--continue-on-error"},
		{"plan", "--repo", tree, "--all", "--labels", "run-ci-all"},
		{"policy", "--repo", tree, "--event", "schedule", "--schedule", "0 15 * * 6", "--json"},
		{"file-plan", "--repo", tree, "--file", "tests/e2e/megatron/test_glm4_9b.py", "--image-tag", "pr-7"},
	} {
		t.Run(strings.Join(args[:1], " "), func(t *testing.T) {
			wantCode, want, wantErr := runCLI(t, nil, args...)
			var out, errb bytes.Buffer
			code := Run(append(args, "--planner", "checkout"), Env{Stdout: &out, Stderr: &errb})
			got, stderr := out.String(), errb.String()
			if code != wantCode || got != want {
				t.Errorf("%s: wanted exit %d and\n%s\ngot exit %d and\n%s\n(stderr %s; miles-ci's %s)", strings.Join(args, " "), wantCode, want, code, got, stderr, wantErr)
			}
			if !strings.Contains(stderr, "::notice::--planner checkout: the answer is the checkout's own tests/ci code") {
				t.Errorf("wanted the notice on stderr, got %q", stderr)
			}
		})
	}
}

func TestPlannerCheckoutStepOutputs(t *testing.T) {
	tree := checkoutTree(t)
	dir := t.TempDir()
	diff := filepath.Join(dir, "diff.z")
	if err := os.WriteFile(diff, []byte("M\x00docs/a.md\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{}
	for _, planner := range []string{"miles-ci", "checkout"} {
		out := filepath.Join(dir, planner)
		code, _, stderr := runCLI(t, nil, "policy", "--repo", tree, "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
			"--changed-files", diff, "--github-output", out, "--planner", planner)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", planner, code, stderr)
		}
		data, _ := os.ReadFile(out)
		outputs[planner] = string(data)
	}
	if outputs["checkout"] != outputs["miles-ci"] || !strings.Contains(outputs["checkout"], "skipped_stages=") {
		t.Errorf("wanted the same step outputs, got miles-ci %q and checkout %q", outputs["miles-ci"], outputs["checkout"])
	}
}

func TestPlannerCheckoutErrors(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "plan", "--repo", milesRepo(), "--hw", "cpu", "--suite", "stage-a-cpu", "--planner", "checkout", "--python", filepath.Join(t.TempDir(), "python3"))
	if code != 1 || !strings.Contains(stderr, "--planner checkout runs the checkout's own tests/ci code with Python 3.10 or newer") {
		t.Errorf("wanted exit 1 and the missing Python named, got %d %q", code, stderr)
	}
	tree := checkoutTree(t)
	code, _, stderr = runCLI(t, nil, "plan", "--repo", tree, "--hw", "cuda", "--suite", "stage-z", "--planner", "checkout")
	if code != 1 || !strings.Contains(stderr, "::error::the checkout's own python tests/ci/run_suite.py --hw cuda --suite stage-z --cadence regular --labels --list-only exited 1") {
		t.Errorf("wanted the checkout's refusal, got %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, nil, "plan", "--repo", tree, "--hw", "cuda", "--suite", "stage-z", "--planner", "python")
	if code != 2 || !strings.Contains(stderr, `--planner "python" is not one of miles-ci, checkout`) {
		t.Errorf("wanted a usage error, got %d %q", code, stderr)
	}
}

func TestVerifyCommand(t *testing.T) {
	tree := checkoutTree(t)
	code, out, stderr := runCLI(t, nil, "verify", "--repo", tree, "--max-cases", "60", "--git-diffs", "0")
	if code != 0 || !strings.HasSuffix(out, "every answer agrees\n") || !strings.Contains(out, "plan       60/60 agree") {
		t.Errorf("wanted exit 0 and every answer agreeing, got %d\n%s%s", code, out, stderr)
	}
	// A checkout miles-ci does not cover: a GPU test without labels, which its
	// own ci_register.py accepts.
	if err := os.WriteFile(filepath.Join(tree, "tests", "ci", "ci_register.py"), []byte("def register_cuda_ci(est_time, suite, *, labels=None):\n    return None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "tests", "e2e", "test_older.py"), []byte("register_cuda_ci(est_time=9, suite=\"stage-b-2-gpu-h200\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, nil, "verify", "--repo", tree, "--max-cases", "20", "--git-diffs", "0")
	if code != 1 || !strings.Contains(out, "plan       declined (20/20 cases): this checkout's CI accepts register_cuda_ci() without labels") {
		t.Errorf("wanted exit 1 and plan declined, got %d\n%s", code, out)
	}
}
