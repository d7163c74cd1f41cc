package policy

import (
	"slices"
	"testing"
)

func TestSelectPRStages(t *testing.T) {
	reg := &Registry{Registrations: []Registration{
		{File: "tests/e2e/test_mega.py", Backend: CUDA, Suite: "stage-c-2-gpu-h200", Labels: []string{"megatron"}},
		{File: "tests/e2e/test_mega.py", Backend: ROCM, Suite: "stage-c-4-gpu-mi350", Labels: []string{"amd"}},
		{File: "tests/e2e/test_sgl.py", Backend: CUDA, Suite: "stage-c-4-gpu-h200", Labels: []string{"sglang"}},
		{File: "tests/e2e/test_long.py", Backend: CUDA, Suite: "stage-c-8-gpu-h100", Labels: []string{"long"}},
		{File: "tests/e2e/test_night.py", Backend: CUDA, Suite: "stage-c-8-gpu-h200", Labels: []string{"megatron"}, Nightly: true},
		{File: "tests/e2e/test_off.py", Backend: CUDA, Suite: "stage-b-2-gpu-h200", Labels: []string{"megatron"}, Disabled: reason("broken")},
		{File: "tests/e2e/test_always.py", Backend: CUDA, Suite: "stage-b-2-gpu-h200", Labels: []string{"fsdp"}},
		{File: "tests/fast/test_cpu.py", Backend: CPU, Suite: "stage-a-cpu", Labels: []string{}, Implicit: true},
		{File: "tests/e2e/test_ext.py", Backend: ROCM, Suite: "nightly-stage-c-4-gpu-mi350", Labels: []string{"amd"}},
	}}
	all := PRGPUStages()
	except := func(keep ...string) []string {
		var out []string
		for _, s := range all {
			if !slices.Contains(keep, s) {
				out = append(out, s)
			}
		}
		if out == nil {
			out = []string{}
		}
		return out
	}
	z := func(parts ...string) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
			b = append(b, 0)
		}
		return b
	}
	tests := []struct {
		name   string
		cad    Cadence
		labels []string
		diff   []byte
		want   []string
	}{
		{"docs only skip everything", Regular, nil, z("M", "docs/index.md", "A", "README.md", "M", ".pre-commit-config.yaml", "M", "scripts/tools/sync_example_docs.py", "M", "x/y.mdx"), all},
		{"explicit label adds its runnable stage", Regular, []string{"run-ci-megatron"}, z("M", "docs/a.md"), except("stage-c-2-gpu-h200")},
		{"registered test adds its own suites", Regular, []string{"run-ci-megatron", "run-ci-amd", "run-ci-sglang"}, z("M", "tests/e2e/test_sgl.py"), except("stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-4-gpu-mi350")},
		{"rename counts both paths", Regular, []string{"run-ci-sglang", "run-ci-amd"}, z("R087", "docs/old.md", "tests/e2e/test_mega.py"), except("stage-c-4-gpu-h200", "stage-c-4-gpu-mi350")},
		{"unknown path affects all, runnable limits", Regular, []string{"run-ci-sglang"}, z("M", "miles/backends/x.py"), except("stage-c-4-gpu-h200")},
		{"no labels: nothing runnable", Regular, nil, z("M", "miles/x.py"), all},
		{"unusable diff skips nothing", Regular, []string{"run-ci-megatron"}, []byte("M\x00miles/x.py"), []string{}},
		{"missing diff skips nothing", Regular, nil, nil, []string{}},
		{"empty diff skips nothing", Regular, nil, []byte{}, []string{}},
		{"cpu test affects no GPU stage", Regular, []string{"run-ci-megatron"}, z("M", "tests/fast/test_cpu.py"), except("stage-c-2-gpu-h200")},
		{"deleted test is an unknown path", Regular, []string{"run-ci-sglang"}, z("D", "tests/e2e/test_gone.py"), except("stage-c-4-gpu-h200")},
		{"disabled only: not runnable", Regular, []string{"run-ci-fsdp"}, z("M", "tests/e2e/test_always.py"), except("stage-b-2-gpu-h200")},
		{"run-ci-all adds every runnable", Regular, []string{"run-ci-all"}, z("M", "docs/a.md"), except("stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-8-gpu-h100", "stage-c-4-gpu-mi350", "stage-b-2-gpu-h200")},
		{"run-ci-image leaves long out", Regular, []string{"run-ci-image"}, z("M", "docs/a.md"), except("stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-4-gpu-mi350", "stage-b-2-gpu-h200")},
		{"nightly admits nightly registrations", Nightly, []string{"nightly"}, z("M", "docs/a.md"), except("stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-8-gpu-h200", "stage-c-4-gpu-mi350", "stage-b-2-gpu-h200")},
		{"bypass-fastfail adds nothing", Regular, []string{"bypass-fastfail", "run-ci-megatron"}, z("M", "docs/a.md"), except("stage-c-2-gpu-h200")},
		{"nightly registration not explicit on regular", Regular, []string{"run-ci-megatron"}, z("M", "tests/e2e/test_night.py"), except("stage-c-2-gpu-h200")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := SelectPRStages(reg, WorkflowPolicy{Cadence: tc.cad, RawLabels: tc.labels}, tc.diff)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sel.Skipped, tc.want) {
				t.Errorf("wanted skipped %v, got %v (runnable %v, affected %v)", tc.want, sel.Skipped, sel.Runnable, sel.Affected)
			}
		})
	}
}
