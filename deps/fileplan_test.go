package deps

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy"
)

// fileRepo makes a checkout holding the given repo-relative files.
func fileRepo(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		path := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, "")
	}
	return root
}

// lookupOf is a Lookup whose registry holds regs.
func lookupOf(regs ...policy.Registration) Lookup {
	return func(string) (*policy.Registry, error) { return &policy.Registry{Registrations: regs}, nil }
}

func reason(s string) *string { return &s }

func TestPlanFile(t *testing.T) {
	const (
		cudaFile = "tests/e2e/precision/test_hf_attention_cp_relayout.py"
		cpuFile  = "tests/fast/test_utils.py"
		rocmFile = "tests/e2e/amd/test_amd_qwen3.py"
	)
	root := fileRepo(t, cudaFile, cpuFile, rocmFile)
	cuda := policy.Registration{File: cudaFile, Backend: policy.CUDA, EstTime: 2000, Suite: "stage-c-4-gpu-h200", Labels: []string{"precision"}, Line: 7}
	cpu := policy.Registration{File: cpuFile, Backend: policy.CPU, EstTime: 1, Suite: "stage-a-cpu", Implicit: true}
	rocm := policy.Registration{File: rocmFile, Backend: policy.ROCM, EstTime: 600, Suite: "stage-c-4-gpu-mi350", Labels: []string{"amd"}, Line: 3}
	tests := []struct {
		name    string
		req     FileRequest
		regs    []policy.Registration
		want    FilePlan
		wantErr string
	}{
		{name: "cuda", req: FileRequest{File: cudaFile}, regs: []policy.Registration{cuda},
			want: FilePlan{File: cudaFile, HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", RunsOn: []string{"h200", "4gpu"},
				ContainerImage: "radixark/miles:dev", ImageSource: FromDefault, TimeoutSeconds: 2500,
				Command: []string{"python3", cudaFile}}},
		{name: "cuda pr-body tag", req: FileRequest{File: cudaFile, PRBody: "ci-image-tag: dev-202611300915"}, regs: []policy.Registration{cuda},
			want: FilePlan{File: cudaFile, HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", RunsOn: []string{"h200", "4gpu"},
				ContainerImage: "radixark/miles:dev-202611300915", ImageSource: FromPRBody, TimeoutSeconds: 2500,
				Command: []string{"python3", cudaFile}}},
		{name: "cpu", req: FileRequest{File: cpuFile, ImageTag: "dev-1"}, regs: []policy.Registration{cpu},
			want: FilePlan{File: cpuFile, HW: policy.CPU, Suite: "stage-a-cpu", RunsOn: []string{},
				ContainerImage: "radixark/miles:dev-1", ImageSource: FromInput,
				TimeoutSeconds: 1800, Command: []string{"pytest", cpuFile, "-v", "-x"}}},
		{name: "cuda wins over rocm", req: FileRequest{File: cudaFile}, regs: []policy.Registration{rocm, cuda},
			want: FilePlan{File: cudaFile, HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", RunsOn: []string{"h200", "4gpu"},
				ContainerImage: "radixark/miles:dev", ImageSource: FromDefault, TimeoutSeconds: 2500,
				Command: []string{"python3", cudaFile}}},
		{name: "rocm only", req: FileRequest{File: rocmFile, PRBody: "ci-image-tag: dev-2"}, regs: []policy.Registration{rocm},
			want: FilePlan{File: rocmFile, HW: policy.ROCM, Suite: "stage-c-4-gpu-mi350", RunsOn: []string{"self-hosted", "amd", "mi350", "4gpu"},
				ContainerImage: "rocm/sgl-dev:miles-rocm720-mi35x", ImageSource: FromDefault, TimeoutSeconds: 1800,
				Command: []string{"python3", rocmFile}}},
		{name: "rocm only with rocm tag", req: FileRequest{File: rocmFile, ROCmImageTag: "miles-rocm720-mi35x-20261130"}, regs: []policy.Registration{rocm},
			want: FilePlan{File: rocmFile, HW: policy.ROCM, Suite: "stage-c-4-gpu-mi350", RunsOn: []string{"self-hosted", "amd", "mi350", "4gpu"},
				ContainerImage: "rocm/sgl-dev:miles-rocm720-mi35x-20261130", ImageSource: FromInput, TimeoutSeconds: 1800,
				Command: []string{"python3", rocmFile}}},
		{name: "timeout truncates", req: FileRequest{File: cudaFile},
			regs: []policy.Registration{{File: cudaFile, Backend: policy.CUDA, EstTime: 1500.9, Suite: "stage-b-2-gpu-h200", Labels: []string{"sglang"}}},
			want: FilePlan{File: cudaFile, HW: policy.CUDA, Suite: "stage-b-2-gpu-h200", RunsOn: []string{"h200", "2gpu"},
				ContainerImage: "radixark/miles:dev", ImageSource: FromDefault, TimeoutSeconds: 1876,
				Command: []string{"python3", cudaFile}}},
		// Errors.
		{name: "bad path", req: FileRequest{File: "tests/e2e/x.py"},
			wantErr: `test file "tests/e2e/x.py" is not a registered tests/ path; give a repo-relative path like tests/e2e/precision/test_x.py under tests/e2e, tests/fast, tests/fast-gpu or tests/ci`},
		{name: "shell metacharacters", req: FileRequest{File: "tests/e2e/test_$(id).py"},
			wantErr: `test file "tests/e2e/test_$(id).py" is not a registered tests/ path; give a repo-relative path like tests/e2e/precision/test_x.py under tests/e2e, tests/fast, tests/fast-gpu or tests/ci`},
		{name: "dot dot", req: FileRequest{File: "tests/e2e/../../test_x.py"},
			wantErr: `test file "tests/e2e/../../test_x.py" is not a registered tests/ path; give a repo-relative path like tests/e2e/precision/test_x.py under tests/e2e, tests/fast, tests/fast-gpu or tests/ci`},
		{name: "missing file", req: FileRequest{File: "tests/e2e/precision/test_gone.py"},
			wantErr: "test file tests/e2e/precision/test_gone.py: tests/e2e/precision/test_gone.py does not exist in " + root + "; check the path and the checked-out ref"},
		{name: "bad image tag", req: FileRequest{File: cudaFile, PRBody: "ci-image-tag: radixark/miles:dev"}, regs: []policy.Registration{cuda},
			wantErr: "ci-image-tag must be a Docker tag, not a full image name: radixark/miles:dev"},
		{name: "unregistered", req: FileRequest{File: cudaFile},
			wantErr: cudaFile + " has no CI registration; /rerun-test runs only registered test files (add register_cpu_ci, register_cuda_ci or register_rocm_ci)"},
		{name: "disabled", req: FileRequest{File: cudaFile},
			regs:    []policy.Registration{{File: cudaFile, Backend: policy.CUDA, EstTime: 10, Suite: "stage-c-4-gpu-h200", Labels: []string{"sglang"}, Disabled: reason("FIXME: re-enable once this case passes")}},
			wantErr: cudaFile + " is disabled: FIXME: re-enable once this case passes"},
		{name: "two cpu/cuda registrations", req: FileRequest{File: cudaFile},
			regs:    []policy.Registration{cuda, {File: cudaFile, Backend: policy.CPU, EstTime: 5, Suite: "stage-b-cpu"}},
			wantErr: cudaFile + " has multiple CPU/CUDA registrations (CPU:stage-b-cpu, CUDA:stage-c-4-gpu-h200); expected exactly one"},
		{name: "rocm nightly registration is skipped", req: FileRequest{File: rocmFile},
			regs: []policy.Registration{{File: rocmFile, Backend: policy.ROCM, EstTime: 5, Suite: "nightly-stage-c-8-gpu-mi350", Labels: []string{"amd"}}, rocm},
			want: FilePlan{File: rocmFile, HW: policy.ROCM, Suite: "stage-c-4-gpu-mi350", RunsOn: []string{"self-hosted", "amd", "mi350", "4gpu"},
				ContainerImage: "rocm/sgl-dev:miles-rocm720-mi35x", ImageSource: FromDefault, TimeoutSeconds: 1800,
				Command: []string{"python3", rocmFile}}},
		{name: "two rocm registrations", req: FileRequest{File: rocmFile},
			regs:    []policy.Registration{rocm, {File: rocmFile, Backend: policy.ROCM, EstTime: 5, Suite: "stage-c-4-gpu-mi350", Labels: []string{"amd", "long"}}},
			wantErr: rocmFile + " has multiple ROCm registrations (ROCM:stage-c-4-gpu-mi350, ROCM:stage-c-4-gpu-mi350); expected exactly one"},
		{name: "two nightly rocm registrations", req: FileRequest{File: rocmFile},
			regs: []policy.Registration{{File: rocmFile, Backend: policy.ROCM, EstTime: 5, Suite: "nightly-stage-c-8-gpu-mi350", Labels: []string{"amd"}},
				{File: rocmFile, Backend: policy.ROCM, EstTime: 5, Suite: "nightly-stage-c-2-gpu-mi350", Labels: []string{"amd"}}},
			wantErr: rocmFile + " has multiple ROCm registrations (ROCM:nightly-stage-c-2-gpu-mi350, ROCM:nightly-stage-c-8-gpu-mi350); expected exactly one"},
		{name: "rocm nightly only", req: FileRequest{File: rocmFile},
			regs:    []policy.Registration{{File: rocmFile, Backend: policy.ROCM, EstTime: 5, Suite: "nightly-stage-c-8-gpu-mi350", Labels: []string{"amd"}}},
			wantErr: rocmFile + " is registered only for nightly-stage-c-8-gpu-mi350, which runs outside miles-ci (external nightly); register it for stage-c-4-gpu-mi350 to run it here"},
		{name: "unknown suite", req: FileRequest{File: cudaFile},
			regs:    []policy.Registration{{File: cudaFile, Backend: policy.CUDA, EstTime: 5, Suite: "stage-c-8-gpu-b200", Labels: []string{"sglang"}, Line: 4}},
			wantErr: cudaFile + " line 4: Unknown suite stage-c-8-gpu-b200 for backend CUDA; the cuda suites are stage-b-2-gpu-h200, stage-c-8-gpu-h100, stage-c-8-gpu-h200, stage-c-4-gpu-h200, stage-c-2-gpu-h200"},
		{name: "cpu suite on cuda", req: FileRequest{File: cudaFile},
			regs:    []policy.Registration{{File: cudaFile, Backend: policy.CUDA, EstTime: 5, Suite: "stage-a-cpu", Labels: []string{"sglang"}, Line: 2}},
			wantErr: cudaFile + " line 2: Unknown suite stage-a-cpu for backend CUDA; the cuda suites are stage-b-2-gpu-h200, stage-c-8-gpu-h100, stage-c-8-gpu-h200, stage-c-4-gpu-h200, stage-c-2-gpu-h200"},
		{name: "absurd est_time", req: FileRequest{File: cudaFile},
			regs:    []policy.Registration{{File: cudaFile, Backend: policy.CUDA, EstTime: 1e300, Suite: "stage-c-4-gpu-h200", Labels: []string{"sglang"}, Line: 9}},
			wantErr: cudaFile + " line 9: est_time 1e+300 gives no usable timeout; give an estimate between 0 and 483840 seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Root = root
			got, err := PlanFile(tt.req, lookupOf(tt.regs...))
			checkErr(t, err, tt.wantErr)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("wanted %+v, got %+v", tt.want, got)
			}
		})
	}
}

func TestPlanFileLookupError(t *testing.T) {
	const f = "tests/ci/test_x.py"
	root := fileRepo(t, f)
	_, err := PlanFile(FileRequest{Root: root, File: f}, func(string) (*policy.Registry, error) {
		return nil, errors.New("not implemented yet")
	})
	checkErr(t, err, "test registry of "+root+": not implemented yet")
}

func TestPlanFileNotACheckout(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "typo")
	_, err := PlanFile(FileRequest{Root: missing, File: "tests/fast/test_x.py"}, lookupOf())
	checkErr(t, err, missing+" does not exist: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it")
}

func TestCheckTestPathSymlinks(t *testing.T) {
	root := fileRepo(t, "real/test_a.py", "tests/e2e/test_b.py")
	mustSymlink := func(target, link string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Skipf("symlinks unsupported: %v", err)
		}
	}
	mustSymlink(filepath.Join(root, "real"), "tests/e2e/linked")
	mustSymlink(filepath.Join(root, "real", "test_a.py"), "tests/e2e/test_link.py")
	if err := os.MkdirAll(filepath.Join(root, "tests", "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "tests", "fast"), "not a dir")
	if err := os.Mkdir(filepath.Join(root, "tests", "ci", "test_dir.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, wantErr string
	}{
		{name: "plain", file: "tests/e2e/test_b.py"},
		{name: "symlinked dir", file: "tests/e2e/linked/test_a.py",
			wantErr: "test file tests/e2e/linked/test_a.py: tests/e2e/linked is a symlink; a single-file run follows no symlinks, give the real path"},
		{name: "symlinked file", file: "tests/e2e/test_link.py",
			wantErr: "test file tests/e2e/test_link.py: tests/e2e/test_link.py is a symlink; a single-file run follows no symlinks, give the real path"},
		{name: "file as dir", file: "tests/fast/test_x.py",
			wantErr: "test file tests/fast/test_x.py: tests/fast is not a directory"},
		{name: "dir as file", file: "tests/ci/test_dir.py",
			wantErr: "test file tests/ci/test_dir.py: not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, CheckTestPath(root, tt.file), tt.wantErr)
		})
	}
}

// TestPlanFileRegistry runs the plan against the real registry on
// testdata/miles-repo, and on testdata/broken-repo, where a broken file
// elsewhere in the tree fails every single-file run, as in file_run.py.
func TestPlanFileRegistry(t *testing.T) {
	root := filepath.Join("..", "testdata", "miles-repo")
	tests := []struct {
		root    string // testdata/miles-repo when empty
		file    string
		hw      policy.Backend
		suite   string
		timeout int
		wantErr string
	}{
		{file: "tests/e2e/precision/test_hf_attention_cp_relayout.py", hw: policy.CUDA, suite: "stage-c-4-gpu-h200", timeout: 2500},
		{file: "tests/fast/test_utils.py", hw: policy.CPU, suite: "stage-a-cpu", timeout: 1800},
		{file: "tests/e2e/amd/test_amd_rollout.py", hw: policy.ROCM, suite: "stage-c-4-gpu-mi350", timeout: 2000},
		{file: "tests/e2e/amd/test_amd_qwen3.py",
			wantErr: "tests/e2e/amd/test_amd_qwen3.py is disabled: FIXME: re-enable once this case passes on the MI350 runners."},
		{file: "tests/e2e/precision/test_two.py",
			wantErr: "tests/e2e/precision/test_two.py has multiple CPU/CUDA registrations (CPU:stage-b-cpu, CUDA:stage-b-2-gpu-h200); expected exactly one"},
		{root: filepath.Join("..", "testdata", "broken-repo"), file: "tests/fast/test_ok.py",
			wantErr: `tests/ci/test_none.py: No CI registry found in tests/ci/test_none.py; add a top-level call such as register_cpu_ci(est_time=60, suite="stage-b-cpu")`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := root
			if tt.root != "" {
				r = tt.root
			}
			got, err := PlanFile(FileRequest{Root: r, File: tt.file}, policy.LoadRegistry)
			checkErr(t, err, tt.wantErr)
			if got.HW != tt.hw || got.Suite != tt.suite || got.TimeoutSeconds != tt.timeout {
				t.Errorf("wanted %s %s %ds, got %+v", tt.hw, tt.suite, tt.timeout, got)
			}
		})
	}
}

// TestPlanFileRefusesSymlinksElsewhere: like file_run.py, a single-file run
// reads the whole registry without following a symlink, so a symlinked test
// file or folder anywhere below the discovery roots fails every file's run,
// not only its own.
func TestPlanFileRefusesSymlinksElsewhere(t *testing.T) {
	const f = "tests/fast/test_ok.py"
	lookup := lookupOf(policy.Registration{File: f, Backend: policy.CPU, Suite: "stage-a-cpu", EstTime: 1})
	tests := []struct{ name, link, target, want string }{
		{"file", "tests/e2e/test_link.py", "real/test_a.py",
			"tests/e2e/test_link.py is a symlink: a single-file run, like file_run.py, reads no symlinked test file or folder below tests/fast, tests/fast-gpu, tests/e2e, tests/ci; replace it with the real file or folder"},
		{"folder", "tests/e2e/linked", "real",
			"tests/e2e/linked is a symlink: a single-file run, like file_run.py, reads no symlinked test file or folder below tests/fast, tests/fast-gpu, tests/e2e, tests/ci; replace it with the real file or folder"},
		{"discovery root", "tests/ci", "real",
			"tests/ci is a symlink: a single-file run, like file_run.py, reads no symlinked test file or folder below tests/fast, tests/fast-gpu, tests/e2e, tests/ci; replace it with the real file or folder"},
		// Only test_*.py files count, as in file_run.py.
		{"other file", "tests/e2e/conftest.py", "real/test_a.py", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fileRepo(t, f, "real/test_a.py", "tests/e2e/test_b.py")
			if err := os.Symlink(filepath.Join(root, filepath.FromSlash(tt.target)), filepath.Join(root, filepath.FromSlash(tt.link))); err != nil {
				t.Skipf("symlinks unsupported: %v", err)
			}
			_, err := PlanFile(FileRequest{Root: root, File: f}, lookup)
			checkErr(t, err, tt.want)
		})
	}
}

// TestPlanFileB200 (issue 24, defect 3): a test homed on a B200 stage whose
// workflow job names no runner of its own (the planner of a called workflow
// picks them) runs where file_run.py sends it: CUDA_STAGES' runners, and
// under the B200 pool rules ["b200", "<required_gpus>gpu"] with num_gpus.
func TestPlanFileB200(t *testing.T) {
	gpugen := t.TempDir()
	testfiles.CopyTree(t, "../testdata/miles-gpugen", gpugen)
	wf := filepath.Join(gpugen, ".github", "workflows")
	pool := "../testdata/miles-b200pool/.github/workflows/"
	for _, f := range []string{"_run-ci-b200.yml", "_run-ci-b200-batch.yml"} {
		data, err := os.ReadFile(pool + f)
		if err != nil {
			t.Fatal(err)
		}
		testfiles.Write(t, wf, f, string(data))
	}
	prTest, err := os.ReadFile(filepath.Join(wf, "pr-test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	job := regexp.MustCompile(`(?s)  stage-c-8-gpu-b200:\n.*`).ReplaceAllString(string(prTest), `  stage-c-b200:
    needs: [policy, image, stage-a-cpu]
    if: |
      always() && !cancelled() &&
      !contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), 'stage-c-8-gpu-b200')
    uses: ./.github/workflows/_run-ci-b200.yml
    with:
      container_image: ${{ needs.image.outputs.container_image }}
      cadence: ${{ needs.policy.outputs.cadence }}
      raw_labels: ${{ needs.policy.outputs.raw_labels }}
      run_8_gpu: true
      run_4_gpu: false
    secrets: inherit
`)
	testfiles.Write(t, wf, "pr-test.yml", job)
	for _, tc := range []struct {
		name, root, file string
		runsOn           []string
		numGPUs          int
	}{
		{"GPU-generation rules", gpugen, "tests/e2e/short/test_blackwell_only.py", []string{"b200", "8gpu"}, 0},
		{"pool rules, num_gpus=2", "../testdata/miles-b200pool", "tests/e2e/short/test_b200_two.py", []string{"b200", "2gpu"}, 2},
		{"pool rules, the home's count", "../testdata/miles-b200pool", "tests/e2e/megatron/test_b200_eight.py", []string{"b200", "8gpu"}, 8},
		{"pool rules, a Hopper stage", "../testdata/miles-b200pool", "tests/e2e/short/test_hopper_only.py", []string{"h200", "2gpu"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tables, err := policy.LoadTables(tc.root)
			if err != nil {
				t.Fatal(err)
			}
			fp, err := PlanFile(FileRequest{Root: tc.root, File: tc.file, Tables: tables}, tables.LoadRegistry)
			if err != nil {
				t.Fatalf("wanted a plan, got %v", err)
			}
			if fp.HW != policy.CUDA || !reflect.DeepEqual(fp.RunsOn, tc.runsOn) || fp.NumGPUs != tc.numGPUs {
				t.Errorf("wanted cuda on %q with %d GPU(s), got %s on %q with %d", tc.runsOn, tc.numGPUs, fp.HW, fp.RunsOn, fp.NumGPUs)
			}
		})
	}
}
