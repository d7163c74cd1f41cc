package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/daggersdk"
	"github.com/radixark/miles-ci/pipeline"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// TestRunDryRunEveryStage checks `miles-ci run --dry-run --json` for every
// shard of every stage miles-ci runs against rules §9: the image, the
// secrets per backend, the steps in layer order and the workflow's command.
func TestRunDryRunEveryStage(t *testing.T) {
	type facts struct {
		image   string
		secrets []string
		first   string // the first step that installs something
		verify  bool   // runs verify_source_resolution.py
	}
	want := map[policy.Backend]facts{
		policy.CPU:  {"python:3.11", []string{"HF_TOKEN"}, "uv pip install -r requirements.txt -r tests/ci/requirements-ci-cpu.txt", true},
		policy.CUDA: {"radixark/miles:dev", []string{"WANDB_API_KEY", "NEON_DATABASE_URL"}, "reconcile", true},
		policy.ROCM: {"rocm/sgl-dev:miles-rocm720-mi35x", []string{"WANDB_API_KEY"}, "pip install polars zstandard xxhash blake3 numba==0.65.1 --break-system-packages", false},
	}
	for _, st := range policy.Roster() {
		if st.External {
			continue
		}
		for id := 0; id < max(st.Shards, 1); id++ {
			t.Run(fmt.Sprintf("%s/%d", st.Name, id), func(t *testing.T) {
				args := []string{"run", "--repo", milesRepo(), "--stage", st.Name, "--labels", "run-ci-megatron", "--dry-run", "--json"}
				if st.Shards > 1 {
					args = append(args, "--shard", fmt.Sprint(id))
				}
				code, stdout, stderr := runCLI(t, nil, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				var spec pipeline.Spec
				if err := json.Unmarshal([]byte(stdout), &spec); err != nil {
					t.Fatal(err)
				}
				w := want[st.Backend]
				if spec.Image != w.image || !slices.Equal(spec.Secrets, w.secrets) {
					t.Errorf("wanted %s with %v, got %s with %v", w.image, w.secrets, spec.Image, spec.Secrets)
				}
				phase, sawInstall, sawSource := 0, false, false
				for _, s := range spec.Steps {
					i := slices.Index(pipeline.Phases, s.Phase)
					if i < phase {
						t.Fatalf("step %q (%s) after phase %s", s.Name, s.Phase, pipeline.Phases[phase])
					}
					phase = i
					argv := strings.Join(s.Argv, " ")
					if strings.Contains(argv, w.first) || slices.Contains(s.Argv, w.first) {
						sawInstall = true
						if sawSource {
							t.Errorf("wanted %q before the source", w.first)
						}
					}
					sawSource = sawSource || s.Kind == pipeline.KindSource
				}
				if !sawInstall || !sawSource {
					t.Errorf("wanted the install step %q and the source copy, got %v", w.first, spec.Steps)
				}
				verifies := strings.Contains(stdout, "tests/ci/verify_source_resolution.py")
				if verifies != w.verify {
					t.Errorf("wanted verify_source_resolution.py: %t", w.verify)
				}
				run := spec.Steps[len(spec.Steps)-1]
				cmd := fmt.Sprintf("-- python tests/ci/run_suite.py --hw %s --suite %s", st.Backend, st.Name)
				if st.Shards > 1 {
					cmd += fmt.Sprintf(" --auto-partition-id %d --auto-partition-size %d", id, st.Shards)
				}
				cmd += " --cadence regular --labels run-ci-megatron"
				if st.Backend == policy.ROCM {
					cmd += " --enable-retry --max-attempts 2"
				}
				if !strings.HasSuffix(strings.Join(run.Argv, " "), cmd) || run.Role != pipeline.RoleRun {
					t.Errorf("wanted the run step to end with %q, got %q", cmd, strings.Join(run.Argv, " "))
				}
				plan := spec.Steps[len(spec.Steps)-2]
				if plan.Role != pipeline.RolePlan || !strings.HasSuffix(strings.Join(plan.Argv, " "), strings.TrimPrefix(cmd, "-- ")+" --list-only") {
					t.Errorf("wanted the plan step before the run, got %q", strings.Join(plan.Argv, " "))
				}
				if (st.Backend != policy.CPU) != (spec.GPU.Kind != pipeline.NoGPU && spec.ShmBytes == 32<<30 && len(spec.Ulimits) == 3) {
					t.Errorf("wanted GPUs, 32 GiB shm and ulimits for GPU stages only, got %+v %d %v", spec.GPU, spec.ShmBytes, spec.Ulimits)
				}
			})
		}
	}
}

// TestRunDryRunText checks the text form and the JSON form agree on the command.
func TestRunDryRunText(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "run", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"stage-b-cpu (cpu), cadence regular\nimage: python:3.11\n", "secrets (env, never argv): HF_TOKEN\n",
		"  [run] run the tests\n      env PYTEST_ADDOPTS=--junitxml=/results/junit.xml\n      bash -c <run script> --mask HF_TOKEN -- python tests/ci/run_suite.py --hw cpu --suite stage-b-cpu --cadence regular --labels   (in /__w/miles/miles)\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("wanted %q in\n%s", want, stdout)
		}
	}
}

// TestFileRunDryRun checks a single-file run's spec.
func TestFileRunDryRun(t *testing.T) {
	code, stdout, stderr := runCLI(t, map[string]string{"TEST_FILE": "tests/e2e/megatron/test_glm4_9b.py"},
		"file-run", "--repo", milesRepo(), "--gpus", "none", "--dry-run", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var spec pipeline.Spec
	if err := json.Unmarshal([]byte(stdout), &spec); err != nil {
		t.Fatal(err)
	}
	run := strings.Join(spec.Steps[len(spec.Steps)-1].Argv, " ")
	if spec.File != "tests/e2e/megatron/test_glm4_9b.py" || !strings.HasSuffix(run, "-- timeout --signal=TERM --kill-after=30s 1800s python3 tests/e2e/megatron/test_glm4_9b.py") ||
		!slices.Equal(spec.Secrets, []string{"WANDB_API_KEY"}) || spec.GPU.Kind != pipeline.NoGPU {
		t.Errorf("wanted the file run under timeout with WANDB_API_KEY and no GPU, got %q %v %+v", run, spec.Secrets, spec.GPU)
	}
}

// TestRunErrors checks the usage and input errors of run.
func TestRunErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--repo", milesRepo()}, 2, "miles-ci run: --stage is required\n"},
		{[]string{"run", "--repo", milesRepo(), "--stage", "stage-a-cpu", "--dry-run"}, 1, "::error::stage stage-a-cpu runs in 4 shards; give the shard id, 0 to 3\n"},
		{[]string{"run", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--json"}, 1, "::error::--json goes with --dry-run; a run writes JSON to --results DIR/summary.json\n"},
		{[]string{"run", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--cadence", "hourly", "--dry-run"}, 2, "miles-ci run: --cadence \"hourly\" is not one of regular, nightly, weekly, release\n"},
		{[]string{"run", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--continue-on-error", "--dry-run"}, 2, "miles-ci run: --continue-on-error: the workflows never pass it; add the bypass-fastfail label instead\n"},
		{[]string{"file-run", "--repo", milesRepo()}, 2, "miles-ci file-run: --file is required (or set TEST_FILE)\n"},
	} {
		code, _, stderr := runCLI(t, nil, tc.args...)
		if first, _, _ := strings.Cut(stderr, "\n"); code != tc.code || first+"\n" != tc.want {
			t.Errorf("%v: wanted exit %d and %q, got %d and %q", tc.args, tc.code, tc.want, code, stderr)
		}
	}
}

// TestRunExitsLikeTheSuite runs with a fake engine: the summary is printed,
// the secrets in the environment are handed over, and the exit status is the suite's.
func TestRunExitsLikeTheSuite(t *testing.T) {
	defer func(old func(context.Context, pipeline.Request, daggersdk.Inputs, string, string, io.Writer) (report.Summary, error)) {
		engineRun = old
	}(engineRun)
	var gotHost daggersdk.Inputs
	var gotNonce string
	engineRun = func(_ context.Context, req pipeline.Request, host daggersdk.Inputs, nonce, results string, _ io.Writer) (report.Summary, error) {
		gotHost, gotNonce = host, nonce
		return report.Summary{HW: policy.CUDA, Suite: req.Stage.Name, Image: req.Image.Image, ExitCode: 255,
			Tests: []report.TestResult{{File: "tests/e2e/a.py", Status: report.Fail}}}, nil
	}
	code, stdout, _ := runCLI(t, map[string]string{"WANDB_API_KEY": "k"}, "run", "--repo", milesRepo(), "--stage", "stage-b-2-gpu-h200",
		"--gpus", "none", "--run-id", "r1", "--quiet")
	if code != 255 || !strings.Contains(stdout, "FAIL     tests/e2e/a.py") {
		t.Errorf("wanted exit 255 and the summary, got %d and %q", code, stdout)
	}
	if gotNonce != "r1" || gotHost.Secrets["WANDB_API_KEY"] != "k" || len(gotHost.Secrets) != 1 || gotHost.Repo != milesRepo() {
		t.Errorf("wanted run id r1, the one secret and the repo, got %q %+v", gotNonce, gotHost)
	}
}
