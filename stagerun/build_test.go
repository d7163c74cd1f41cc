package stagerun_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/policy"
	. "github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

const milesTree = "../testdata/miles"

// stageRequest builds a stage request on the Miles-like test tree.
func stageRequest(t *testing.T, in usecase.Inputs) Request {
	t.Helper()
	if in.Repo == "" {
		in.Repo = milesTree
	}
	req, err := usecase.Stage(in)
	if err != nil {
		t.Fatalf("usecase.Stage(%+v): %v", in, err)
	}
	return req
}

func shard(n int) *int { return &n }

func build(t *testing.T, req Request) Spec {
	t.Helper()
	spec, err := Build(req)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return spec
}

// listing renders steps one per line: phase, workdir and argv, with the fixed
// scripts by name, so a test can state a whole stage's container in order.
func listing(spec Spec) []string {
	var out []string
	for _, s := range spec.Steps {
		argv := s.Argv
		if len(argv) > 3 && argv[0] == "bash" && argv[1] == "-c" && argv[2] == Script(argv[3]) {
			argv = append([]string{"<" + argv[3] + ">"}, argv[4:]...)
		}
		if len(argv) > 3 && argv[0] == "python3" && argv[1] == "-ISc" && argv[2] == RunWrapper() && argv[3] == "miles-ci-run" {
			argv = append([]string{"<run>"}, argv[4:]...)
		}
		line := fmt.Sprintf("%s %s", s.Phase, s.Kind)
		if s.Workdir != "" {
			line += " @" + s.Workdir
		}
		for _, f := range s.Files {
			line += " +" + f.Path
		}
		switch s.Kind {
		case KindPatch:
			line += " " + strings.Join(s.Patch.Check, " ")
		case KindExec:
			line += ": " + strings.Join(argv, " ")
		}
		out = append(out, line)
	}
	return out
}

func checkLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("wanted steps\n  %s\ngot\n  %s", strings.Join(want, "\n  "), strings.Join(got, "\n  "))
	}
}

const (
	sglangHead   = "1111111111111111111111111111111111111111"
	megatronHead = "2222222222222222222222222222222222222222"
)

// TestBuildCUDA states a CUDA stage's whole container (rules §9) in order.
func TestBuildCUDA(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-c-4-gpu-h200", Shard: shard(1), Labels: []string{"run-ci-megatron"},
		HeadSHA: "abc", PRNumber: "42", VisibleDevices: "4,5"})
	req.Commits = Commits{SGLang: sglangHead, Megatron: megatronHead}
	spec := build(t, req)
	ws := Workspace
	suite := "python tests/ci/run_suite.py --hw cuda --suite stage-c-4-gpu-h200 --auto-partition-id 0 --auto-partition-size 3 --cadence regular --labels run-ci-megatron"
	checkLines(t, listing(spec), []string{
		"base exec: <stamp> base",
		"requirements exec @" + ws + " +requirements.txt: <reconcile> " + ws + "/requirements.txt",
		"requirements exec: <stamp> requirements",
		"deps exec @/sgl-workspace/sglang: git reset --hard HEAD",
		"deps exec @/sgl-workspace/sglang: git clean -fd",
		"deps exec @/sgl-workspace/sglang: git fetch origin " + sglangHead,
		"deps exec @/sgl-workspace/sglang: git checkout -f FETCH_HEAD",
		"deps exec @/sgl-workspace/sglang: git log --oneline -1",
		"deps exec @/root/Megatron-LM: git reset --hard HEAD",
		"deps exec @/root/Megatron-LM: git clean -fd",
		"deps exec @/root/Megatron-LM: git fetch origin " + megatronHead,
		"deps exec @/root/Megatron-LM: git checkout -f FETCH_HEAD",
		"deps exec @/root/Megatron-LM: git log --oneline -1",
		"deps exec: <stamp> deps",
		"source source @" + ws,
		"source exec @" + ws + ": python tests/ci/verify_source_resolution.py",
		"source exec: <stamp> source",
		"run exec: <gpu-wait> nvidia",
		"run exec @" + ws + ": <plan> " + suite + " --list-only",
		"run exec @" + ws + ": <run> --timeout 21600 --kill-after 30 --reap --ulimit -l unlimited --ulimit -s 65536 --ulimit -n 65535 -- " + suite,
	})
	if spec.Image != "radixark/miles:dev" {
		t.Errorf("wanted image %q, got %q", "radixark/miles:dev", spec.Image)
	}
	wantEnv := []EnvVar{{"CI", "true"}, {"GITHUB_ACTIONS", "true"}, {"GITHUB_WORKSPACE", ws},
		{"SGLANG_SOURCE_ROOT", "/sgl-workspace/sglang/python"}, {"MEGATRON_SOURCE_ROOT", "/root/Megatron-LM"},
		{"PYTHONPATH", ws + ":/sgl-workspace/sglang/python:/root/Megatron-LM"}, {"MILES_TEST_ENABLE_INFINITE_RUN", "false"}}
	if !slices.Equal(spec.Env, wantEnv) {
		t.Errorf("wanted env %v, got %v", wantEnv, spec.Env)
	}
	wantRunEnv := []EnvVar{{"GITHUB_COMMIT_NAME", "abc_42"}, {"GITHUB_STEP_SUMMARY", "/results/step-summary.md"}, {"MILES_CI_GATE_RECORD_DIR", "/tmp/miles-ci-gate"}, {"CUDA_VISIBLE_DEVICES", "4,5"}}
	if !slices.Equal(spec.RunEnv, wantRunEnv) {
		t.Errorf("wanted run env %v, got %v", wantRunEnv, spec.RunEnv)
	}
	if spec.GPU.Kind != NVIDIA || len(spec.GPU.Devices) != 0 || spec.ShmBytes != 32<<30 || len(spec.Ulimits) != 3 {
		t.Errorf("wanted all NVIDIA GPUs, 32 GiB shm and 3 ulimits, got %+v shm %d ulimits %v", spec.GPU, spec.ShmBytes, spec.Ulimits)
	}
	if len(spec.Resolve) != 0 {
		t.Errorf("wanted no resolve step with commits given, got %v", spec.Resolve)
	}
	if len(spec.Tests) != 1 || spec.Tests[0].File != "tests/e2e/megatron/test_glm4_9b.py" || *spec.Tests[0].TimeoutS != 1800 || !spec.CheckPlan {
		t.Errorf("wanted the planned glm4 test with a 1800 s timeout, got %+v", spec.Tests)
	}
}

// TestBuildROCm states the ROCm container with both dependencies named.
func TestBuildROCm(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-c-4-gpu-mi350", Shard: shard(2), Labels: []string{"run-ci-amd"},
		PRBody: "ci-sglang-pr: #1234\nci-megatron-pr: miles-main\n"})
	req.Commits = Commits{SGLang: sglangHead, Megatron: megatronHead}
	spec := build(t, req)
	ws := Workspace
	patch := ws + "/docker/amd_patch/latest/megatron.patch"
	suite := "python tests/ci/run_suite.py --hw rocm --suite stage-c-4-gpu-mi350 --auto-partition-id 1 --auto-partition-size 2 --cadence regular --labels run-ci-amd --enable-retry --max-attempts 2"
	checkLines(t, listing(spec), []string{
		"base exec: <stamp> base",
		"requirements exec: <stamp> requirements",
		"deps exec: <rocm-toolchain>",
		"deps exec @/sgl-workspace/sglang: git reset --hard HEAD",
		"deps exec @/sgl-workspace/sglang: git clean -fd",
		"deps exec @/sgl-workspace/sglang: git fetch origin " + sglangHead,
		"deps exec @/sgl-workspace/sglang: git checkout -f FETCH_HEAD",
		"deps exec @/sgl-workspace/sglang: git log --oneline -1",
		"deps exec @/sgl-workspace/sglang: pip install -e python --no-deps --break-system-packages",
		"deps exec @/root/Megatron-LM: git reset --hard HEAD",
		"deps exec @/root/Megatron-LM: git clean -fd",
		"deps exec @/root/Megatron-LM: git fetch origin " + megatronHead,
		"deps exec @/root/Megatron-LM: git checkout -f FETCH_HEAD",
		"deps exec @/root/Megatron-LM: git log --oneline -1",
		"deps patch @/root/Megatron-LM +docker/amd_patch/latest/megatron.patch git apply --check " + patch,
		"deps exec @/root/Megatron-LM: pip install -e . --no-deps --break-system-packages",
		"deps exec: pip install polars zstandard xxhash blake3 numba==0.65.1 --break-system-packages",
		"deps exec: <stamp> deps",
		"source source @" + ws,
		"source exec @" + ws + ": pip install -e . --no-deps --break-system-packages",
		"source exec: <stamp> source",
		"run exec: <gpu-wait> amd",
		"run exec @" + ws + ": <plan> " + suite + " --list-only",
		"run exec @" + ws + ": <run> --timeout 21600 --kill-after 30 --reap --ulimit -l unlimited --ulimit -s 65536 --ulimit -n 65535 --rocm-devices -- " + suite,
	})
	if spec.Image != "rocm/sgl-dev:miles-rocm720-mi35x" || !slices.Equal(spec.Secrets, []string{"WANDB_API_KEY"}) {
		t.Errorf("wanted rocm/sgl-dev:miles-rocm720-mi35x with WANDB_API_KEY, got %s with %v", spec.Image, spec.Secrets)
	}
	wantEnv := []EnvVar{{"CI", "true"}, {"GITHUB_ACTIONS", "true"}, {"GITHUB_WORKSPACE", ws}, {"PYTHONPATH", ws}, {"MILES_HARDWARE_PLATFORM", "rocm"}}
	if !slices.Equal(spec.Env, wantEnv) {
		t.Errorf("wanted env %v, got %v", wantEnv, spec.Env)
	}
	for _, tc := range spec.Tests {
		if *tc.TimeoutS != 2400 {
			t.Errorf("wanted the retry timeout 2400 s for %s, got %d", tc.File, *tc.TimeoutS)
		}
	}
}

// TestBuildCPU states a CPU stage's container.
func TestBuildCPU(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-cpu"})
	req.Commits = Commits{SGLang: sglangHead, Megatron: megatronHead}
	spec := build(t, req)
	ws := Workspace
	suite := "python tests/ci/run_suite.py --hw cpu --suite stage-b-cpu --cadence regular --labels"
	checkLines(t, listing(spec), []string{
		"base exec: <cpu-tools> v4.2.3",
		"base exec: <stamp> base",
		"requirements exec @" + ws + " +requirements.txt +tests/ci/requirements-ci-cpu.txt: uv pip install -r requirements.txt -r tests/ci/requirements-ci-cpu.txt",
		"requirements exec: <stamp> requirements",
		"deps exec: git init -q " + ws + "/sglang",
		"deps exec: git -C " + ws + "/sglang remote add origin https://github.com/sgl-project/sglang",
		"deps exec: git -C " + ws + "/sglang fetch --depth=1 origin " + sglangHead,
		"deps exec: git -C " + ws + "/sglang checkout -q -f FETCH_HEAD",
		"deps exec: git -C " + ws + "/sglang log --oneline -1",
		"deps exec: git init -q " + ws + "/Megatron-LM",
		"deps exec: git -C " + ws + "/Megatron-LM remote add origin https://github.com/radixark/Megatron-LM",
		"deps exec: git -C " + ws + "/Megatron-LM fetch --depth=1 origin " + megatronHead,
		"deps exec: git -C " + ws + "/Megatron-LM checkout -q -f FETCH_HEAD",
		"deps exec: git -C " + ws + "/Megatron-LM log --oneline -1",
		"deps exec: <stamp> deps",
		"source source @" + ws,
		"source exec @" + ws + ": python tests/ci/verify_source_resolution.py",
		"source exec: <stamp> source",
		"run exec @" + ws + ": <plan> " + suite + " --list-only",
		"run exec @" + ws + ": <run> --timeout 3600 --kill-after 30 --reap -- " + suite,
	})
	run := spec.Steps[len(spec.Steps)-1]
	if !slices.Equal(run.Env, []EnvVar{{"PYTEST_ADDOPTS", "--junitxml=/results/junit.xml"}}) || run.Privileged {
		t.Errorf("wanted an unprivileged run step writing JUnit via PYTEST_ADDOPTS, got env %v privileged %t", run.Env, run.Privileged)
	}
	if spec.Image != CPUImage || spec.GPU.Kind != NoGPU || spec.ShmBytes != 0 || len(spec.Ulimits) != 0 || spec.Tests[0].TimeoutS != nil {
		t.Errorf("wanted python:3.11, no GPU, shm, ulimits or per-file timeout, got %s %+v %d %v", spec.Image, spec.GPU, spec.ShmBytes, spec.Ulimits)
	}
}

// TestBuildEveryStage checks rules §9 facts for every stage miles-ci runs.
func TestBuildEveryStage(t *testing.T) {
	tables, err := policy.LoadTables(milesTree)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range usecase.Stages(tables) {
		t.Run(st.Name, func(t *testing.T) {
			var id *int
			if st.Shards > 1 {
				id = shard(st.Shards)
			}
			spec := build(t, stageRequest(t, usecase.Inputs{Stage: st.Name, Shard: id, Labels: []string{"run-ci-all"}}))
			want := map[policy.Backend]struct {
				image   string
				secrets []string
			}{
				policy.CPU:  {"python:3.11", []string{"HF_TOKEN"}},
				policy.CUDA: {"radixark/miles:dev", []string{"WANDB_API_KEY", "NEON_DATABASE_URL"}},
				policy.ROCM: {"rocm/sgl-dev:miles-rocm720-mi35x", []string{"WANDB_API_KEY"}},
			}[st.Backend]
			if spec.Image != want.image || !slices.Equal(spec.Secrets, want.secrets) {
				t.Errorf("wanted %s with secrets %v, got %s with %v", want.image, want.secrets, spec.Image, spec.Secrets)
			}
			checkPhaseOrder(t, spec)
			last := spec.Steps[len(spec.Steps)-1]
			if last.Role != RoleRun || spec.Steps[len(spec.Steps)-2].Role != RolePlan {
				t.Errorf("wanted plan then run last, got %v", listing(spec)[len(spec.Steps)-2:])
			}
			wantArgs := fmt.Sprintf("--hw %s --suite %s", st.Backend, st.Name)
			if st.Shards > 1 {
				wantArgs += fmt.Sprintf(" --auto-partition-id %d --auto-partition-size %d", st.Shards-1, st.Shards)
			}
			wantArgs += " --cadence regular --labels run-ci-all"
			if !strings.Contains(strings.Join(last.Argv, " "), "-- python tests/ci/run_suite.py "+wantArgs) {
				t.Errorf("wanted the run step to run run_suite.py %s, got %v", wantArgs, last.Argv)
			}
			// ROCm runs no source check; CPU and CUDA do (rules §9).
			verifies := slices.ContainsFunc(spec.Steps, func(s Step) bool { return slices.Contains(s.Argv, "tests/ci/verify_source_resolution.py") })
			if verifies != (st.Backend != policy.ROCM) {
				t.Errorf("wanted verify_source_resolution.py: %t, got %t", st.Backend != policy.ROCM, verifies)
			}
			if len(spec.Resolve) != 0 && st.Backend == policy.ROCM {
				t.Errorf("wanted no dependency ref to resolve for ROCm with nothing named, got %v", spec.Resolve)
			}
		})
	}
}

// checkPhaseOrder checks the layer order: phases never go back, and no step
// before the source copies a test file in.
func checkPhaseOrder(t *testing.T, spec Spec) {
	t.Helper()
	last := 0
	for _, s := range spec.Steps {
		i := slices.Index(Phases, s.Phase)
		if i < last {
			t.Fatalf("step %q of phase %s comes after phase %s", s.Name, s.Phase, Phases[last])
		}
		last = i
		for _, f := range s.Files {
			if strings.HasPrefix(f.Path, "tests/") && f.Path != "tests/ci/requirements-ci-cpu.txt" {
				t.Errorf("step %q copies test file %s before the source phase", s.Name, f.Path)
			}
		}
	}
}

// TestBuildROCmNamedSides checks that ROCm fetches and installs only the named sides (rules §7, §9).
func TestBuildROCmNamedSides(t *testing.T) {
	for _, tc := range []struct {
		name, body       string
		sglang, megatron bool
	}{
		{"nothing named", "", false, false},
		{"sglang only", "ci-sglang-pr: #1234\n", true, false},
		{"megatron only", "ci-megatron-pr: rocm-patched\n", false, true},
		{"both", "ci-sglang-pr: v0.5.0\nci-megatron-pr: #101\n", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := build(t, stageRequest(t, usecase.Inputs{Stage: "stage-c-4-gpu-mi350", Shard: shard(1), PRBody: tc.body}))
			in := func(dir string) bool {
				return slices.ContainsFunc(spec.Steps, func(s Step) bool { return s.Workdir == dir })
			}
			patch := slices.ContainsFunc(spec.Steps, func(s Step) bool { return s.Kind == KindPatch })
			toolchain := slices.ContainsFunc(spec.Steps, func(s Step) bool { return slices.Contains(s.Argv, "rocm-toolchain") })
			if in(SGLangDir) != tc.sglang || in(MegatronDir) != tc.megatron || patch != tc.megatron || toolchain != (tc.sglang || tc.megatron) {
				t.Errorf("wanted sglang %t megatron %t (patch and install with it), got sglang %t megatron %t patch %t toolchain %t",
					tc.sglang, tc.megatron, in(SGLangDir), in(MegatronDir), patch, toolchain)
			}
			if len(spec.Resolve) != btoi(tc.sglang)+btoi(tc.megatron) {
				t.Errorf("wanted one resolve step per named side, got %v", spec.Resolve)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBuildResolveSteps checks that moving refs get an ls-remote step and
// are fetched by name until resolved, and full commits need none.
func TestBuildResolveSteps(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200",
		PRBody: "ci-sglang-pr: #1234\nci-megatron-pr: " + megatronHead + "\n"})
	spec := build(t, req)
	want := []ResolveStep{{Dependency: "sglang", Ref: "#1234", Origin: "pr-body line 1", Fetch: "refs/pull/1234/head",
		Workdir: SGLangDir, Argv: []string{"git", "ls-remote", "origin", "refs/pull/1234/head"}}}
	if fmt.Sprint(spec.Resolve) != fmt.Sprint(want) {
		t.Errorf("wanted %+v, got %+v", want, spec.Resolve)
	}
	cpu := build(t, stageRequest(t, usecase.Inputs{Stage: "stage-b-cpu"}))
	if len(cpu.Resolve) != 2 || cpu.Resolve[0].Workdir != "" || !slices.Equal(cpu.Resolve[1].Argv, []string{"git", "ls-remote", MegatronURL, "miles-main"}) {
		t.Errorf("wanted the CPU stage to resolve both defaults against GitHub, got %+v", cpu.Resolve)
	}
}

// TestBuildFileRuns checks single-file runs (rules §10), ROCm included.
func TestBuildFileRuns(t *testing.T) {
	for _, tc := range []struct {
		file, stage, image string
		command            string
		secrets            []string
	}{
		{"tests/e2e/megatron/test_glm4_9b.py", "stage-c-4-gpu-h200", "radixark/miles:dev",
			"python3 tests/e2e/megatron/test_glm4_9b.py", []string{"WANDB_API_KEY"}},
		{"tests/fast/test_loss.py", "", "", "", nil},
		{"tests/ci/test_run_suite.py", "stage-b-cpu", "python:3.11",
			"pytest tests/ci/test_run_suite.py -v -x", []string{"HF_TOKEN"}},
		{"tests/fast-gpu/test_rocm_kernels.py", "stage-c-4-gpu-mi350", "rocm/sgl-dev:miles-rocm720-mi35x",
			"python3 tests/fast-gpu/test_rocm_kernels.py", []string{"WANDB_API_KEY"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			req, err := usecase.File(usecase.Inputs{Repo: milesTree, File: tc.file})
			if tc.stage == "" {
				if err == nil {
					t.Fatalf("wanted an error for a file with two CPU registrations, got none")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			req.Commits = Commits{SGLang: sglangHead, Megatron: megatronHead}
			spec := build(t, req)
			run := spec.Steps[len(spec.Steps)-1]
			argv := strings.Join(run.Argv, " ")
			if spec.Stage != tc.stage || spec.Image != tc.image || !strings.HasSuffix(argv, "-- "+tc.command) || !slices.Equal(spec.Secrets, tc.secrets) ||
				!strings.Contains(argv, "miles-ci-run --timeout 1800 --kill-after 30 --reap") || spec.TimeoutS != 1800 {
				t.Errorf("wanted %s in %s running %q with %v under miles-ci's 1800 s timer, got %s in %s running %q with %v (timeout %d)",
					tc.stage, tc.image, tc.command, tc.secrets, spec.Stage, spec.Image, run.Argv[4:], spec.Secrets, spec.TimeoutS)
			}
			if spec.CheckPlan || slices.ContainsFunc(spec.Steps, func(s Step) bool { return s.Role == RolePlan }) {
				t.Errorf("wanted no plan step in a single-file run")
			}
			if spec.File != tc.file || len(spec.Tests) != 1 || *spec.Tests[0].TimeoutS != 1800 {
				t.Errorf("wanted the one file with its timeout, got %q %+v", spec.File, spec.Tests)
			}
		})
	}
}

// TestBuildRelease checks a release run: cadence release, the lockfile's
// commits and image tag, nothing to resolve.
func TestBuildRelease(t *testing.T) {
	lock, err := deps.NewLock(deps.BranchCut{Branch: "release/v0.3.0", SGLangCommit: sglangHead, MegatronCommit: megatronHead, ImageTag: "release-v0.3.0-ci"})
	if err != nil {
		t.Fatal(err)
	}
	spec := build(t, stageRequest(t, usecase.Inputs{Stage: "stage-c-2-gpu-h200", Shard: shard(2), Release: &lock}))
	if spec.Cadence != policy.Release || spec.Image != "radixark/miles:release-v0.3.0-ci" || len(spec.Resolve) != 0 {
		t.Errorf("wanted cadence release in radixark/miles:release-v0.3.0-ci with nothing to resolve, got %s in %s, %v", spec.Cadence, spec.Image, spec.Resolve)
	}
	lines := strings.Join(listing(spec), "\n")
	for _, want := range []string{"git fetch origin " + sglangHead, "git fetch origin " + megatronHead, "--cadence release --labels --"} {
		if !strings.Contains(lines+" --", want) {
			t.Errorf("wanted %q in the steps, got\n%s", want, lines)
		}
	}
	if _, err := usecase.Stage(usecase.Inputs{Repo: milesTree, Stage: "stage-b-cpu", Release: &lock, Labels: []string{"run-ci-all"}}); err == nil {
		t.Errorf("wanted an error for labels on a release run, got none")
	}
}

// TestBuildSecretsAndGPUs checks the per-run choices: a fork gets no secrets,
// --gpus none and ids, and the errors for choices a stage cannot take.
func TestBuildSecretsAndGPUs(t *testing.T) {
	fork := build(t, stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Fork: true, GPUs: "none"}))
	if len(fork.Secrets) != 0 || !strings.Contains(fork.SecretsWithheld, "WANDB_API_KEY, NEON_DATABASE_URL") {
		t.Errorf("wanted no secrets for a fork, got %v (%q)", fork.Secrets, fork.SecretsWithheld)
	}
	if fork.GPU.Kind != NoGPU || slices.ContainsFunc(fork.Steps, func(s Step) bool { return s.Role == RoleGPUWait }) {
		t.Errorf("wanted no GPUs and no GPU wait with --gpus none, got %+v", fork.GPU)
	}
	ids := build(t, stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", GPUs: "0,1"}))
	if !slices.Equal(ids.GPU.Devices, device.Set{"0", "1"}) {
		t.Errorf("wanted devices 0,1, got %v", ids.GPU.Devices)
	}
	for _, tc := range []struct {
		in   usecase.Inputs
		want string
	}{
		{usecase.Inputs{Stage: "stage-c-4-gpu-mi350", Shard: shard(1), GPUs: "0,1"},
			"--gpus 0,1: device ids select NVIDIA GPUs only; for ROCm give --gpus all and --visible-devices (HIP_VISIBLE_DEVICES)"},
		{usecase.Inputs{Stage: "stage-b-cpu", VisibleDevices: "1"},
			"stage stage-b-cpu is a CPU stage: --gpus ids and --visible-devices apply to GPU stages only"},
		{usecase.Inputs{Stage: "stage-b-cpu", Labels: []string{"--list-only"}},
			`label "--list-only" would be read as an option of run_suite.py; give PR label names such as run-ci-megatron`},
	} {
		req, err := usecase.Stage(usecase.Inputs{Repo: milesTree, Stage: tc.in.Stage, Shard: tc.in.Shard, GPUs: tc.in.GPUs, VisibleDevices: tc.in.VisibleDevices, Labels: tc.in.Labels})
		if err == nil {
			_, err = Build(req)
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("wanted %q, got %v", tc.want, err)
		}
	}
}

// TestUsecaseErrors checks the request errors a user meets first.
func TestUsecaseErrors(t *testing.T) {
	for _, tc := range []struct {
		in   usecase.Inputs
		want string
	}{
		{usecase.Inputs{Stage: "stage-x"}, `unknown stage "stage-x"; did you mean stage-a-cpu? (the known ones: stage-a-cpu, stage-b-cpu, stage-b-2-gpu-h200, stage-c-2-gpu-h200, stage-c-4-gpu-h200, stage-c-8-gpu-h100, stage-c-8-gpu-h200, stage-c-4-gpu-mi350)`},
		{usecase.Inputs{Stage: "nightly-stage-c-2-gpu-mi350"}, "stage nightly-stage-c-2-gpu-mi350 runs outside miles-ci (the external MI350 nightly); pick one of [stage-a-cpu stage-b-cpu stage-b-2-gpu-h200 stage-c-2-gpu-h200 stage-c-4-gpu-h200 stage-c-8-gpu-h100 stage-c-8-gpu-h200 stage-c-4-gpu-mi350]"},
		{usecase.Inputs{Stage: "stage-a-cpu"}, "stage stage-a-cpu runs in 4 shards; give the shard, 1 to 4, as every output numbers them (shard 2/4 is 2)"},
		{usecase.Inputs{Stage: "stage-a-cpu", Shard: shard(5)}, "stage stage-a-cpu has shards 1 to 4, as every output numbers them (shard 1/4 to 4/4); 5 is not one of them"},
		{usecase.Inputs{Stage: "stage-a-cpu", Shard: shard(0)}, "stage stage-a-cpu has shards 1 to 4, as every output numbers them (shard 1/4 to 4/4); 0 is not one of them"},
		{usecase.Inputs{Stage: "stage-b-cpu", Shard: shard(2)}, "stage stage-b-cpu is not sharded; give shard 1 or none"},
		{usecase.Inputs{Stage: "stage-b-cpu", Event: "pull_request", PRLabelsJSON: "[]", Cadence: "nightly"},
			"give either the trigger facts (--event ...) or --cadence and --labels, not both: the event decides cadence and labels"},
		{usecase.Inputs{Stage: "stage-b-cpu", GPUs: "some"}, `--gpus "some": "some" is not a device id (an index such as 0, or a uuid GPU-...); give all, none, or ids such as 0,1 (or GPU-<uuid>)`},
		{usecase.Inputs{Stage: "stage-b-2-gpu-h200", VisibleDevices: "0,00"}, `--visible-devices "0,00": device 0 is named twice; give the GPU ids the run may see, such as 4,5`},
		{usecase.Inputs{Stage: "stage-b-2-gpu-h200", VisibleDevices: "0;1"}, `--visible-devices "0;1": "0;1" is not a device id (an index such as 0, or a uuid GPU-...); give the GPU ids the run may see, such as 4,5`},
		{usecase.Inputs{Stage: "stage-b-2-gpu-h200", PRBody: "ci-sglang-pr: ../x\n"},
			`pr-body line 1: ci-sglang-pr: value "../x" is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -; write a branch, tag, commit or PR number, e.g. "ci-sglang-pr: #1234" or "ci-sglang-pr: sglang-miles"`},
	} {
		tc.in.Repo = milesTree
		_, err := usecase.Stage(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("wanted %q, got %v", tc.want, err)
		}
	}
}

// TestBuildEventTrigger checks that trigger facts decide cadence and labels.
func TestBuildEventTrigger(t *testing.T) {
	spec := build(t, stageRequest(t, usecase.Inputs{Stage: "stage-b-cpu", Event: "schedule", Schedule: "0 15 * * 6"}))
	if spec.Cadence != policy.Weekly {
		t.Errorf("wanted the weekly cron to run cadence weekly, got %s", spec.Cadence)
	}
}

// The steps of a GPU-generation checkout's run workflows (rules §11.6):
// testdata/miles-gpugen's _run-ci.yml reconciles with its own script and sets
// NVSHMEM_HCA_LIST on 4-GPU H200 runners; its _run-ci-rocm.yml no longer
// patches Megatron-LM and installs fewer packages.
func TestBuildFollowsRunWorkflows(t *testing.T) {
	const tree = "../testdata/miles-gpugen"
	envOf := func(spec Spec, name string) (string, bool) {
		for _, e := range spec.Env {
			if e.Name == name {
				return e.Value, true
			}
		}
		return "", false
	}
	h4 := build(t, stageRequest(t, usecase.Inputs{Repo: tree, Stage: "stage-c-4-gpu-h200", Shard: shard(1), Labels: []string{"run-ci-short"}}))
	if v, ok := envOf(h4, "NVSHMEM_HCA_LIST"); !ok || v != "none_single_node_nvlink_only" {
		t.Errorf("4-GPU H200: NVSHMEM_HCA_LIST %q, %t", v, ok)
	}
	if h4.TimeoutS != 90*60 {
		t.Errorf("the run job's timeout-minutes: 90 gives %d s", h4.TimeoutS)
	}
	b2 := build(t, stageRequest(t, usecase.Inputs{Repo: tree, Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}}))
	if _, ok := envOf(b2, "NVSHMEM_HCA_LIST"); ok {
		t.Errorf("2-GPU H200 must not get NVSHMEM_HCA_LIST")
	}
	want := "requirements exec @/__w/miles/miles +tests/ci/reconcile_dependencies.py +examples/lora/requirements.txt +requirements.txt: python tests/ci/reconcile_dependencies.py examples/lora/requirements.txt requirements.txt"
	if !slices.Contains(listing(h4), want) {
		t.Errorf("no reconcile step %q in\n%s", want, strings.Join(listing(h4), "\n"))
	}
	body := "ci-megatron-pr: miles-main\n"
	rocm := strings.Join(listing(build(t, stageRequest(t, usecase.Inputs{Repo: tree, Stage: "stage-c-4-gpu-mi350", Shard: shard(1), PRBody: body, Given: usecase.Given{Body: true}}))), "\n")
	if strings.Contains(rocm, string(KindPatch)) || !strings.Contains(rocm, "pip install polars zstandard xxhash blake3 --break-system-packages") {
		t.Errorf("ROCm steps of a workflow without the patch:\n%s", rocm)
	}
	// testdata/miles has no run workflows: the steps of rules §9.
	old := strings.Join(listing(build(t, stageRequest(t, usecase.Inputs{Stage: "stage-c-4-gpu-mi350", Shard: shard(1), PRBody: body, Given: usecase.Given{Body: true}}))), "\n")
	if !strings.Contains(old, string(KindPatch)) || !strings.Contains(old, "numba==0.65.1") {
		t.Errorf("ROCm steps of rules §9:\n%s", old)
	}
}

// TestBuildRefusesLineBreakInFileName checks a planned file whose name has
// a line break is refused before any container, naming it, instead of
// failing the plan check after the build (issue 22, LOW).
func TestBuildRefusesLineBreakInFileName(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}})
	plan := *req.Plan
	plan.Enabled = append(slices.Clone(plan.Enabled), policy.PlannedTest{File: "tests/e2e/gpu/test_x\n.py"})
	req.Plan = &plan
	_, err := Build(req)
	if want := `test file "tests/e2e/gpu/test_x\n.py" has a line break in its name`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("wanted %q, got %v", want, err)
	}
}
