package usecase

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/checkoutpy"
	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy"
)

// verifyTree is testdata/miles with a resolve-ci-policy step and a file_run
// of miles-ci's own (testdata/verify/shims, answered by testdata/oracle), so
// that all three of verify's commands run against Python written from the
// rules rather than from miles-ci's Go code.
func verifyTree(t *testing.T) string {
	t.Helper()
	tree := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, filepath.Join("..", "testdata", "miles"), tree)
	read := func(p string) string {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	ci := filepath.Join(tree, "tests", "ci")
	testfiles.Write(t, ci, "miles_ci_oracle.py", read(filepath.Join("..", "testdata", "oracle", "run_suite_oracle.py")))
	testfiles.Write(t, ci, "file_run.py", read(filepath.Join("..", "testdata", "verify", "shims", "file_run.py")))
	testfiles.Write(t, ci, "ci_policy.py", read(filepath.Join(ci, "ci_policy.py"))+read(filepath.Join("..", "testdata", "verify", "shims", "ci_policy_main.py")))
	return tree
}

func TestVerifyAgrees(t *testing.T) {
	testfiles.NeedPython(t)
	tree := verifyTree(t)
	progress := map[string][]int{}
	rep, err := Verify(context.Background(), VerifyRequest{Repo: tree, MaxCases: 150, Progress: func(command string, done, total int) {
		progress[command] = append(progress[command], done, total)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("wanted every case to agree, got:\n%s", rep.Text())
	}
	// Progress: each command from 0 to all its cases, in batches of at
	// least minBatch.
	for _, c := range rep.Commands {
		p := progress[c.Command]
		if len(p) < 4 || p[0] != 0 || p[len(p)-2] != c.Cases || p[len(p)-1] != c.Cases || (c.Cases > minBatch && p[2] != minBatch) {
			t.Errorf("%s: wanted progress 0, %d, ..., %d of %d, got %v", c.Command, minBatch, c.Cases, c.Cases, p)
		}
	}
	for _, c := range rep.Commands {
		if c.NotCompared != "" || c.Cases == 0 {
			t.Errorf("%s: wanted cases compared, got %d (%s)", c.Command, c.Cases, c.NotCompared)
		}
	}
	if !strings.HasSuffix(rep.Text(), "every answer agrees\n") {
		t.Errorf("wanted the text to end with %q, got:\n%s", "every answer agrees", rep.Text())
	}
}

func TestVerifyFindsPlantedDifference(t *testing.T) {
	testfiles.NeedPython(t)
	tree := verifyTree(t)
	// The checkout changes how it balances shards: by file name, not est_time.
	suite := filepath.Join(tree, "tests", "ci", "run_suite.py")
	src, err := os.ReadFile(suite)
	if err != nil {
		t.Fatal(err)
	}
	const balance = "key=lambda t: (-t.est_time, t.filename)"
	if !strings.Contains(string(src), balance) {
		t.Fatalf("testdata/miles/tests/ci/run_suite.py no longer holds %q; plant another difference", balance)
	}
	testfiles.Write(t, filepath.Dir(suite), "run_suite.py", strings.Replace(string(src), balance, "key=lambda t: t.filename", 1))
	rep, err := Verify(context.Background(), VerifyRequest{Repo: tree, MaxCases: 150})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatalf("wanted a difference, got:\n%s", rep.Text())
	}
	plan := rep.Commands[0]
	if plan.Command != "plan" || len(plan.Differences) == 0 {
		t.Fatalf("wanted plan differences, got %+v", plan)
	}
	for _, d := range plan.Differences {
		if !strings.Contains(d.Case, "--auto-partition-size") {
			t.Errorf("wanted only sharded cases to differ, got %s", d.Case)
		}
	}
	if text := rep.Text(); !strings.Contains(text, "case(s) differ") || !strings.Contains(text, "--- miles-ci") {
		t.Errorf("wanted the differences shown, got:\n%s", text)
	}
	for _, c := range rep.Commands[1:] {
		if len(c.Differences) > 0 {
			t.Errorf("%s: wanted no difference (only run_suite.py changed), got %d", c.Command, len(c.Differences))
		}
	}
}

func TestCheckoutPlannerAnswersLikeMilesCI(t *testing.T) {
	testfiles.NeedPython(t)
	tree := verifyTree(t)
	c, err := NewCheckout(tree, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := policy.PlanRequest{HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", Cadence: policy.Regular, Labels: []string{"run-ci-megatron"},
		Partition: &policy.Partition{ID: 0, Size: 3}}
	plans, err := c.Plans(ctx, []policy.PlanRequest{req})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := policy.LoadRegistry(tree)
	if err != nil {
		t.Fatal(err)
	}
	want, err := policy.BuildPlan(reg, req)
	if err != nil {
		t.Fatal(err)
	}
	if plans[0].Text != want.Text() {
		t.Errorf("wanted %q, got %q", want.Text(), plans[0].Text)
	}
	if plans[0].Plan == nil || len(plans[0].Plan.Enabled) != len(want.Enabled) || plans[0].Plan.Partition == nil || *plans[0].Plan.Partition != *want.Partition {
		t.Errorf("wanted the text read back as %+v, got %+v (%v)", want, plans[0].Plan, plans[0].ReadErr)
	}
	for i, e := range plans[0].Plan.Enabled {
		// The fixture's ci_register.py is a stub without collect_tests, so
		// the labels (from the checkout's registry) stay empty here.
		if e.File != want.Enabled[i].File || e.EstTime != want.Enabled[i].EstTime {
			t.Errorf("enabled %d: wanted %+v, got %+v", i, want.Enabled[i], e)
		}
	}

	pol, err := c.Policy(ctx, policy.Trigger{Event: policy.EventPullRequest, PRLabelsJSON: `["run-ci-megatron","nightly"]`}, []byte("M\x00docs/x.md\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if pol.Outputs.Cadence != policy.Nightly || strings.Join(pol.Outputs.RawLabels, " ") != "run-ci-megatron nightly" || !pol.Outputs.BypassFastfail {
		t.Errorf("wanted nightly, [run-ci-megatron nightly], bypass; got %+v", pol.Outputs)
	}

	// The checkout's refusal is its answer, named with its command line.
	_, err = c.Plans(ctx, []policy.PlanRequest{{HW: policy.CUDA, Suite: "stage-z", Cadence: policy.Regular}})
	var ce *checkoutpy.CheckoutError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "python tests/ci/run_suite.py --hw cuda --suite stage-z") {
		t.Errorf("wanted a CheckoutError naming the command, got %v", err)
	}
}

func TestCheckoutWithoutPython(t *testing.T) {
	_, err := NewCheckout(filepath.Join("..", "testdata", "miles"), filepath.Join(t.TempDir(), "no-python"))
	var np *checkoutpy.NoPythonError
	if !errors.As(err, &np) {
		t.Fatalf("wanted a NoPythonError, got %v", err)
	}
	if !strings.Contains(err.Error(), "Python 3.10 or newer") || !strings.Contains(err.Error(), "--python PATH") {
		t.Errorf("wanted the message to name the version and the way out, got %q", err)
	}
}

func TestCheckoutPythonTooOld(t *testing.T) {
	// A stand-in interpreter that reports Python 3.8, as the driver's own check would.
	dir := t.TempDir()
	fake := filepath.Join(dir, "python3.8")
	testfiles.Write(t, dir, "python3.8", "#!/bin/sh\necho '{\"python_too_old\": \"3.8.10\"}'\nexit 3\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := NewCheckout(filepath.Join("..", "testdata", "miles"), fake)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Ask(context.Background(), []checkoutpy.Case{{Registry: true}})
	if err == nil || !strings.Contains(err.Error(), "is Python 3.8.10") {
		t.Errorf("wanted a too-old Python named, got %v", err)
	}
}

// TestVerifyComparesRefusals: where miles-ci fails on a test registration,
// the cases are compared all the same, and the checkout's code refusing them
// for the same fault agrees (it did not, once: every case was counted as a
// difference).
func TestVerifyComparesRefusals(t *testing.T) {
	testfiles.NeedPython(t)
	tree := verifyTree(t)
	testfiles.Write(t, tree, "tests/e2e/broken/test_broken.py", "register_cuda_ci(est_time=60, suite=\"stage-b-2-gpu-h200\", labels=[\"no-such-label\"])\n")
	rep, err := Verify(context.Background(), VerifyRequest{Repo: tree, MaxCases: 60})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("wanted the same refusals to agree, got:\n%s", rep.Text())
	}
	failed := 0
	for _, c := range rep.Commands {
		failed += c.MilesCIFailed
		if c.MilesCIFailed > 0 && !strings.Contains(c.MilesCIError, "test_broken.py") {
			t.Errorf("%s: wanted the broken file named, got %q", c.Command, c.MilesCIError)
		}
	}
	if failed == 0 {
		t.Fatalf("wanted cases where miles-ci fails, got:\n%s", rep.Text())
	}
	if text := rep.Text(); !strings.Contains(text, "the same refusal agrees") {
		t.Errorf("wanted the text to say the refusals were compared, got:\n%s", text)
	}
}

func TestFailedSide(t *testing.T) {
	for _, tc := range []struct {
		goErr error
		exit  int
		want  string
	}{
		{nil, 0, ""}, {errors.New("x"), 0, "miles-ci"}, {nil, 1, "checkout"}, {errors.New("x"), 1, "both"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := failedSide(tc.goErr, checkoutpy.Answer{Exit: tc.exit}); got != tc.want {
				t.Errorf("wanted %q, got %q", tc.want, got)
			}
		})
	}
}
