package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
)

// TestPlanTextSpecExample renders the example of rules §5 exactly.
func TestPlanTextSpecExample(t *testing.T) {
	p := &Plan{
		HW: ROCM, Suite: "stage-c-4-gpu-mi350", Cadence: Regular, IncludeLabels: []string{"amd", "megatron"},
		Partition: &Partition{ID: 0, Size: 2},
		Skipped:   []SkippedTest{{File: "tests/e2e/x/test_a.py", Reason: "FIXME: re-enable once this case passes"}},
		Enabled: []PlannedTest{
			{File: "tests/e2e/x/test_b.py", EstTime: 1800},
			{File: "tests/fast/test_c.py", EstTime: 1, Implicit: true},
		},
		EstTotal: 1801,
	}
	want := `Policy: cadence='regular' bypass_fastfail=False include_labels=['amd', 'megatron']

============================================================
Hardware: ROCM  Suite: stage-c-4-gpu-mi350  Cadence: regular  Continue on error: False  Partition: 1/2 (0-based id=0)
============================================================
Skipped 1 test(s):
  - tests/e2e/x/test_a.py (reason: FIXME: re-enable once this case passes)

Enabled 2 test(s) (est total 1801s):
  - tests/e2e/x/test_b.py (est_time=1800.0s)
  - tests/fast/test_c.py (est_time=1.0s) [implicit]

`
	if got := p.Text(); got != want {
		t.Errorf("wanted\n%s\ngot\n%s", want, got)
	}
}

func TestPlanTextNoTests(t *testing.T) {
	p := &Plan{HW: CUDA, Suite: "stage-b-2-gpu-h200", Cadence: Nightly, IncludeLabels: []string{}, BypassFastfail: true, ContinueOnError: true}
	want := `Policy: cadence='nightly' bypass_fastfail=True include_labels=[]

============================================================
Hardware: CUDA  Suite: stage-b-2-gpu-h200  Cadence: nightly  Continue on error: True  Partition: full
============================================================
No tests found for hw=CUDA, suite=stage-b-2-gpu-h200, cadence=nightly
This is expected during incremental migration. Skipping.

No tests to run. Exiting with success.
`
	if got := p.Text(); got != want {
		t.Errorf("wanted\n%s\ngot\n%s", want, got)
	}
}

func TestBuildPlan(t *testing.T) {
	root := t.TempDir()
	testfiles.Write(t, root, "tests/e2e/test_a.py", `register_cuda_ci(600, "stage-c-2-gpu-h200", labels=["megatron"], disabled="")`+"\n")
	testfiles.Write(t, root, "tests/e2e/test_b.py", `register_cuda_ci(60.5, "stage-c-2-gpu-h200", labels=["megatron"]); register_cuda_ci(1e-5, "stage-c-2-gpu-h200", labels=["sglang"])`+"\n")
	testfiles.Write(t, root, "tests/e2e/test_c.py", `register_cuda_ci(900, "stage-c-2-gpu-h200", labels=["megatron", "long"], nightly=True)`+"\n")
	testfiles.Write(t, root, "tests/fast/test_d.py", "def test(): pass\n")
	reg, err := LoadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := BuildPlan(reg, PlanRequest{HW: CUDA, Suite: "stage-c-2-gpu-h200", Cadence: Nightly, Labels: []string{"run-ci-sglang"}, Partition: &Partition{ID: 0, Size: 2}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(p)
	want := `{"hw":"cuda","suite":"stage-c-2-gpu-h200","cadence":"nightly","include_labels":["amd","ckpt","eval","fsdp","ft-short","fully-async","lora","megatron","miles-plugin","model-scripts","mooncake","precision","qwen35","replay","sglang","short","weight-update"],"admit_nightly":true,"continue_on_error":true,"partition":{"id":0,"size":2},"enabled":[{"file":"tests/e2e/test_c.py","est_time":900,"labels":["megatron","long"],"nightly":true}],"skipped":[{"file":"tests/e2e/test_a.py","reason":"disabled"}],"est_total":900}`
	if string(got) != want {
		t.Errorf("wanted %s\n got %s", want, got)
	}
	text := strings.Split(p.Text(), "\n")
	if text[2] != strings.Repeat("=", 60) {
		t.Errorf("wanted the rule on line 3, got %q", text[2])
	}
	if _, err := BuildPlan(reg, PlanRequest{HW: CUDA, Suite: "stage-a-cpu", Cadence: Regular}); err == nil || !strings.HasPrefix(err.Error(), "Unknown suite stage-a-cpu for backend CUDA") {
		t.Errorf("wanted the unknown-suite error, got %v", err)
	}
	p, _ = BuildPlan(reg, PlanRequest{HW: CUDA, Suite: "stage-c-2-gpu-h200", Cadence: Regular, Labels: []string{"run-ci-sglang"}})
	if len(p.Enabled) != 1 || p.Enabled[0].EstTime != 1e-5 || !strings.Contains(p.Text(), "(est_time=1e-05s)") || !strings.Contains(p.Text(), "est total 0s") {
		t.Errorf("wanted one test with est_time=1e-05, got %s", p.Text())
	}
}
