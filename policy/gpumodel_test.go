package policy

import "testing"

func TestModelOfRunsOn(t *testing.T) {
	tests := []struct {
		name    string
		runsOn  []string
		backend Backend
		want    string
		err     string
	}{
		{name: "a CUDA stage job (31f1ca9)", runsOn: []string{"h200", "2gpu"}, backend: CUDA, want: "h200"},
		{name: "the ROCm stage job", runsOn: []string{"self-hosted", "amd", "mi350", "4gpu"}, backend: ROCM, want: "mi350"},
		{name: "a B200 pool job", runsOn: []string{"b200", "8gpu"}, backend: CUDA, want: "b200"},
		{name: "labels are case-insensitive, as GitHub's", runsOn: []string{"Self-Hosted", "Linux", "X64", "H100", "8gpu"}, backend: CUDA, want: "h100"},
		{name: "no model", runsOn: []string{"self-hosted", "4gpu"}, backend: CUDA,
			err: `s runs on ["self-hosted" "4gpu"]: miles-ci reads the GPU model from the one runs_on label that is not the size (4gpu), the vendor (nvidia) or a label GitHub gives every runner (self-hosted, linux, x64), and these labels leave []`},
		{name: "two candidates", runsOn: []string{"h200", "8gpu", "rdma"}, backend: CUDA,
			err: `s runs on ["h200" "8gpu" "rdma"]: miles-ci reads the GPU model from the one runs_on label that is not the size (4gpu), the vendor (nvidia) or a label GitHub gives every runner (self-hosted, linux, x64), and these labels leave ["h200" "rdma"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ModelOfRunsOn("s", tt.runsOn, tt.backend)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("wanted %q, got %v", tt.err, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("wanted %q, got %q (%v)", tt.want, got, err)
			}
		})
	}
}

// TestGPUModelFollowsTheRuleSet reads each stage's model where its rule set
// declares it: the workflows' runs_on at 31f1ca9, hardware.py's CUDA_STAGES
// (whose runs_on names the model first, then what else the runner offers,
// as rdma) in the GPU-generation set.
func TestGPUModelFollowsTheRuleSet(t *testing.T) {
	tests := []struct {
		root string
		want map[string]string
	}{
		{"../testdata/miles", map[string]string{"stage-a-cpu": "", "stage-c-4-gpu-h200": "h200", "stage-c-8-gpu-h100": "h100", "stage-c-4-gpu-mi350": "mi350"}},
		{gpugenRoot, map[string]string{"stage-c-8-gpu-h200-rdma": "h200", "stage-c-8-gpu-b200": "b200", "stage-b-2-gpu-h200": "h200"}},
	}
	for _, tt := range tests {
		tables, err := LoadTables(tt.root)
		if err != nil {
			t.Fatal(err)
		}
		for stage, want := range tt.want {
			st, ok := tables.Stage(stage)
			if !ok {
				t.Fatalf("%s: no stage %s", tt.root, stage)
			}
			got, err := tables.GPUModel(st)
			if err != nil || got != want {
				t.Errorf("%s %s: wanted %q, got %q (%v)", tt.root, stage, want, got, err)
			}
		}
	}
}
