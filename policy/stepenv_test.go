package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStepEnvAllowed(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"NVSHMEM_HCA_LIST", true},
		{"NCCL_DEBUG", true},
		{"TORCH_NCCL_ASYNC_ERROR_HANDLING", true},
		{"PATH", false},
		{"LD_PRELOAD", false},
		{"PYTHONPATH", false},
		{"GITHUB_ACTIONS", false},
		{"HOME", false},
		{"CI", false},
		{"CUDA_VISIBLE_DEVICES", false},
		{"SGLANG_SOURCE_ROOT", false},
		{"MILES_CI_RESULTS", false},
		{"WANDB_API_KEY", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StepEnvAllowed(tc.name); got != tc.want {
				t.Errorf("wanted %t, got %t", tc.want, got)
			}
		})
	}
}

// A pull request's _run-ci.yml that appends PATH, LD_PRELOAD and
// GITHUB_ACTIONS=false to $GITHUB_ENV sets none of them, and lint names each.
func TestStepEnvOutsideAllowList(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(gpugenRoot)); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(root, RunCIWorkflow)
	data, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	anchor := "      - name: Wait for GPU ready\n"
	var add strings.Builder
	for _, kv := range []string{"PATH=/tmp/evil:/usr/bin", "LD_PRELOAD=/tmp/evil.so", "GITHUB_ACTIONS=false"} {
		name := kv[:strings.IndexByte(kv, '=')]
		add.WriteString("      - name: Set " + name + "\n        run: echo \"" + kv + "\" >> \"$GITHUB_ENV\"\n\n")
	}
	text := strings.Replace(string(data), anchor, add.String()+anchor, 1)
	if err := os.WriteFile(wf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := LoadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, d := range Lint(reg) {
		if d.Kind == DriftStepEnv {
			named = append(named, d.Message)
		}
	}
	if len(named) != 3 || !strings.Contains(named[0], "sets PATH through $GITHUB_ENV") || !strings.Contains(named[1], "LD_PRELOAD") || !strings.Contains(named[2], "GITHUB_ACTIONS") {
		t.Errorf("wanted three env-not-allowed drifts (PATH, LD_PRELOAD, GITHUB_ACTIONS), got %q", named)
	}
	for _, e := range reg.Tables.RunSteps.Env {
		if e.Name != "NVSHMEM_HCA_LIST" {
			t.Errorf("wanted only NVSHMEM_HCA_LIST applied, got %s=%s", e.Name, e.Value)
		}
	}
}
