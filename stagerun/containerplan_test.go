package stagerun

import (
	"reflect"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

func TestContainerPlanTests(t *testing.T) {
	const text = `Policy: cadence='regular' bypass_fastfail=False include_labels=['megatron']

============================================================
Hardware: CUDA  Suite: stage-c-4-gpu-h200  Cadence: regular  Continue on error: False  Partition: 1/3 (0-based id=0)
============================================================
Enabled 2 test(s) (est total 3000s):
  - tests/e2e/a/test_long.py (est_time=2000.0s)
  - tests/e2e/a/test_short.py (est_time=1000.0s)

`
	got, err := containerPlanTests(text, policy.CUDA)
	if err != nil {
		t.Fatal(err)
	}
	want := []ExpectedTest{{File: "tests/e2e/a/test_long.py", TimeoutS: intPtr(2500)}, {File: "tests/e2e/a/test_short.py", TimeoutS: intPtr(1800)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wanted %+v, got %+v", want, got)
	}
	got, err = containerPlanTests("Policy: ...\nNo tests found for hw=CPU, suite=stage-b-cpu, cadence=regular\n", policy.CPU)
	if err != nil || len(got) != 0 {
		t.Errorf("wanted no tests, got %v, %v", got, err)
	}
	if _, err := containerPlanTests("Traceback (most recent call last):\n", policy.CPU); err == nil {
		t.Error("wanted an error for output that is no plan")
	}
}
