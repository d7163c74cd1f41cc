package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/github/githubtest"
	"github.com/radixark/miles-ci/internal/resultsdir"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
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
					args = append(args, "--shard", fmt.Sprint(id+1))
				}
				spec := dryRunSpec(t, nil, args...)
				w := want[st.Backend]
				if spec.Image != w.image || !slices.Equal(spec.Secrets, w.secrets) {
					t.Errorf("wanted %s with %v, got %s with %v", w.image, w.secrets, spec.Image, spec.Secrets)
				}
				phase, sawInstall, sawSource := 0, false, false
				for _, s := range spec.Steps {
					i := slices.Index(stagerun.Phases, s.Phase)
					if i < phase {
						t.Fatalf("step %q (%s) after phase %s", s.Name, s.Phase, stagerun.Phases[phase])
					}
					phase = i
					argv := strings.Join(s.Argv, " ")
					if strings.Contains(argv, w.first) || slices.Contains(s.Argv, w.first) {
						sawInstall = true
						if sawSource {
							t.Errorf("wanted %q before the source", w.first)
						}
					}
					sawSource = sawSource || s.Kind == stagerun.KindSource
				}
				if !sawInstall || !sawSource {
					t.Errorf("wanted the install step %q and the source copy, got %v", w.first, spec.Steps)
				}
				verifies := slices.ContainsFunc(spec.Steps, func(s stagerun.Step) bool {
					return strings.Contains(strings.Join(s.Argv, " "), "tests/ci/verify_source_resolution.py")
				})
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
				if !strings.HasSuffix(strings.Join(run.Argv, " "), cmd) || run.Role != stagerun.RoleRun {
					t.Errorf("wanted the run step to end with %q, got %q", cmd, strings.Join(run.Argv, " "))
				}
				plan := spec.Steps[len(spec.Steps)-2]
				if plan.Role != stagerun.RolePlan || !strings.HasSuffix(strings.Join(plan.Argv, " "), strings.TrimPrefix(cmd, "-- ")+" --list-only") {
					t.Errorf("wanted the plan step before the run, got %q", strings.Join(plan.Argv, " "))
				}
				if (st.Backend != policy.CPU) != (spec.GPU.Kind != stagerun.NoGPU && spec.ShmBytes == 32<<30 && len(spec.Ulimits) == 3) {
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
		"  [run] run the tests\n      env PYTEST_ADDOPTS=--junitxml=/results/junit.xml\n      python3 -ISc <run wrapper> --timeout 3600 --kill-after 30 --reap -- python tests/ci/run_suite.py --hw cpu --suite stage-b-cpu --cadence regular --labels   (in /__w/miles/miles)\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("wanted %q in\n%s", want, stdout)
		}
	}
}

// dryRunSpec runs a `--dry-run --json` command line that must succeed and decodes its spec.
func dryRunSpec(t *testing.T, vars map[string]string, args ...string) stagerun.Spec {
	t.Helper()
	code, stdout, stderr := runCLI(t, vars, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var spec stagerun.Spec
	if err := json.Unmarshal([]byte(stdout), &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestFileRunDryRun checks a single-file run's spec.
func TestFileRunDryRun(t *testing.T) {
	spec := dryRunSpec(t, map[string]string{"TEST_FILE": "tests/e2e/megatron/test_glm4_9b.py"},
		"file-run", "--repo", milesRepo(), "--gpus", "none", "--dry-run", "--json")
	run := strings.Join(spec.Steps[len(spec.Steps)-1].Argv, " ")
	if spec.File != "tests/e2e/megatron/test_glm4_9b.py" || !strings.Contains(run, "miles-ci-run --timeout 1800 --kill-after 30 --reap ") || !strings.HasSuffix(run, " -- python3 tests/e2e/megatron/test_glm4_9b.py") ||
		!slices.Equal(spec.Secrets, []string{"WANDB_API_KEY"}) || spec.GPU.Kind != stagerun.NoGPU {
		t.Errorf("wanted the file run under miles-ci's timer with WANDB_API_KEY and no GPU, got %q %v %+v", run, spec.Secrets, spec.GPU)
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
		{[]string{"run", "--repo", milesRepo(), "--stage", "stage-a-cpu", "--dry-run"}, 1, "::error::stage stage-a-cpu runs in 4 shards; give the shard, 1 to 4, as every output numbers them (shard 2/4 is 2)\n"},
		{[]string{"run", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--json"}, 1, "::error::--json goes with --dry-run; a run writes JSON to --results DIR/summary.json\n"},
		{[]string{"run", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--cadence", "hourly", "--dry-run"}, 2, "miles-ci run: --cadence \"hourly\" is not one of regular, nightly, weekly, release\n"},
		{[]string{"file-run", "--repo", milesRepo(), "--file", "tests/e2e/megatron/test_glm4_9b.py", "--timeout-minutes", "5", "--dry-run"}, 2,
			"miles-ci file-run: --timeout-minutes: a single file runs under its own timeout, max(1800, est_time x 1.25) s (rules §10)\n"},
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
	defer func(old func(context.Context, stagerun.Request, engine.Inputs, string, io.Writer, *report.Masker, func(string)) (stagerun.Result, error)) {
		engineRun = old
	}(engineRun)
	var gotHost engine.Inputs
	var gotNonce string
	engineRun = func(_ context.Context, req stagerun.Request, host engine.Inputs, nonce string, _ io.Writer, _ *report.Masker, _ func(string)) (stagerun.Result, error) {
		gotHost, gotNonce = host, nonce
		return stagerun.Result{Summary: report.Summary{HW: policy.CUDA, Suite: req.Stage.Name, Image: req.Image.Image, ExitCode: 255, Verdict: report.Failed,
			Tests: []report.TestResult{{File: "tests/e2e/a.py", Status: report.Fail}}}}, nil
	}
	code, stdout, _ := runCLI(t, map[string]string{"WANDB_API_KEY": "key-0123456789"}, "run", "--repo", milesRepo(), "--stage", "stage-b-2-gpu-h200",
		"--gpus", "none", "--run-id", "r1", "--quiet")
	if code != 255 || !strings.Contains(stdout, "FAIL     tests/e2e/a.py") {
		t.Errorf("wanted exit 255 and the summary, got %d and %q", code, stdout)
	}
	if gotNonce != "r1" || gotHost.Secrets["WANDB_API_KEY"] != "key-0123456789" || len(gotHost.Secrets) != 1 || gotHost.Repo != milesRepo() {
		t.Errorf("wanted run id r1, the one secret and the repo, got %q %+v", gotNonce, gotHost)
	}
}

// TestRunResults runs with a fake engine and checks the run's edges: a
// secret too short to mask and a bad --results are refused before the run,
// an engine error exits report.ExitCannotRun, the results folder is replaced
// whole, and no printed line holds a secret.
func TestRunResults(t *testing.T) {
	defer func(old func(context.Context, stagerun.Request, engine.Inputs, string, io.Writer, *report.Masker, func(string)) (stagerun.Result, error)) {
		engineRun = old
	}(engineRun)
	const secret = "wandb-secret-0123456789"
	var engineErr error
	ran := false
	engineRun = func(_ context.Context, req stagerun.Request, _ engine.Inputs, _ string, _ io.Writer, m *report.Masker, _ func(string)) (stagerun.Result, error) {
		ran = true
		if engineErr != nil {
			return stagerun.Result{}, engineErr
		}
		s := report.Summary{HW: policy.CUDA, Suite: req.Stage.Name, Image: req.Image.Image, ExitCode: 0, Verdict: report.Inconsistent,
			Tests:        []report.TestResult{{File: "tests/e2e/a.py", Status: report.NotRun}},
			Inconsistent: []string{"printed " + secret}}
		return stagerun.Result{Summary: s, Files: []stagerun.ResultFile{{Name: "summary.json", Data: m.Mask("{" + secret + "}")},
			{Name: "artifacts/x.txt", Data: "x"}}}, nil
	}
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(results, "stale.txt"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An earlier run's folder: miles-ci may replace it.
	if err := os.WriteFile(filepath.Join(results, resultsdir.Marker), []byte(resultsdir.MarkerText), 0o644); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "work.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	run := func(env map[string]string, results string) (int, string, string) {
		ran = false
		return runCLI(t, env, "run", "--repo", milesRepo(), "--stage", "stage-b-2-gpu-h200", "--gpus", "none", "--quiet", "--results", results)
	}

	code, stdout, stderr := run(map[string]string{"WANDB_API_KEY": secret}, results)
	if code != report.ExitInconsistent || strings.Contains(stdout+stderr, secret) || !strings.Contains(stdout, "inconsistent: printed ***") {
		t.Errorf("wanted exit %d and the secret masked, got %d, %q %q", report.ExitInconsistent, code, stdout, stderr)
	}
	entries, _ := os.ReadDir(results)
	var names []string
	for _, e := range entries {
		if e.Name() != resultsdir.Marker {
			names = append(names, e.Name())
		}
	}
	if data, _ := os.ReadFile(filepath.Join(results, resultsdir.Marker)); string(data) != resultsdir.MarkerText {
		t.Errorf("wanted the results folder marked as miles-ci's, got %q", data)
	}
	if !slices.Equal(names, []string{"artifacts", "report.html", "summary.json"}) {
		t.Errorf("wanted the folder replaced whole (no stale.txt), got %v", names)
	}
	if page, _ := os.ReadFile(filepath.Join(results, "report.html")); strings.Contains(string(page), secret) ||
		!strings.Contains(string(page), "inconsistent: printed ***") || !strings.Contains(string(page), "stage-b-2-gpu-h200") {
		t.Errorf("wanted report.html of the shard with the secret masked, got\n%s", page)
	}
	if data, _ := os.ReadFile(filepath.Join(results, "summary.json")); string(data) != "{***}" {
		t.Errorf("wanted summary.json masked, got %q", data)
	}

	for _, tc := range []struct {
		name    string
		env     map[string]string
		results string
		want    string
	}{
		{"a short secret", map[string]string{"HF_TOKEN": "short"}, results, "::error::secret HF_TOKEN is (or has a line) shorter than 8 characters"},
		{"a symlinked results folder", nil, filepath.Join(dir, "link"), "::error::--results " + filepath.Join(dir, "link") + " is a symlink"},
		{"a results file", nil, filepath.Join(results, "summary.json"), "is not a folder"},
		{"a results folder in no folder", nil, filepath.Join(dir, "none", "results"), "does not exist"},
		{"the current folder", nil, ".", "names the current folder"},
		{"the folder above", nil, "..", "names the current folder or one above it"},
		{"the checkout", nil, milesRepo(), "is the checkout"},
		{"a parent of the checkout", nil, filepath.Dir(milesRepo()), "is the checkout"},
		{"the root", nil, "/", "the root of the file system"},
		{"a folder miles-ci did not make", nil, mine, "a folder miles-ci did not make"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(tc.env, tc.results)
			if code != 1 || ran || !strings.Contains(stderr, tc.want) {
				t.Errorf("wanted exit 1 before the run and %q, got %d (ran %t), %q", tc.want, code, ran, stderr)
			}
		})
	}

	engineErr = fmt.Errorf("%w: the engine said %s", stagerun.ErrCannotRun, secret)
	code, _, stderr = run(map[string]string{"WANDB_API_KEY": secret}, results)
	if code != report.ExitCannotRun || strings.Contains(stderr, secret) || !strings.Contains(stderr, "::error::miles-ci could not run or read the suite: the engine said ***") {
		t.Errorf("wanted exit %d and the masked error, got %d, %q", report.ExitCannotRun, code, stderr)
	}
}

// TestRunFromPR runs run and file-run with --pr on a fake engine against the
// stand-in API: the PR's facts reach the request, a fork PR hands the engine
// no secret at all, the event payload spares the PR request, and the results
// table goes to the step summary.
func TestRunFromPR(t *testing.T) {
	defer func(old func(context.Context, stagerun.Request, engine.Inputs, string, io.Writer, *report.Masker, func(string)) (stagerun.Result, error)) {
		engineRun = old
	}(engineRun)
	var got stagerun.Request
	var gotHost engine.Inputs
	engineRun = func(_ context.Context, req stagerun.Request, host engine.Inputs, _ string, _ io.Writer, _ *report.Masker, _ func(string)) (stagerun.Result, error) {
		got, gotHost = req, host
		exit := 0
		s := report.Summary{HW: req.Stage.Backend, Suite: req.Stage.Name, Image: req.Image.Image, Passed: true, Verdict: report.Passed, Notes: req.Notes,
			Tests: []report.TestResult{{File: "tests/e2e/megatron/test_glm4_9b.py", Status: report.Pass, Attempts: 1, ElapsedS: 42, ExitCode: &exit}}}
		if req.Plan != nil {
			s.Cadence, s.Shard = req.Plan.Cadence, req.Plan.Partition
		}
		if req.File != nil {
			s.File = req.File.File
		}
		return stagerun.Result{Summary: s}, nil
	}
	api := githubtest.Start(apiFixtures())
	defer api.Close()
	dir := t.TempDir()
	secrets := map[string]string{"WANDB_API_KEY": "wandb-0123456789", "NEON_DATABASE_URL": "postgres://neon-0123", "GITHUB_API_URL": api.URL, "GITHUB_TOKEN": "ghp_runTokenValue"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range secrets {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	t.Run("stage run", func(t *testing.T) {
		summary := filepath.Join(dir, "stage.md")
		api.Requests = 0
		code, stdout, stderr := runWithEnv([]string{"run", "--pr", "2874", "--repo", milesRepo(), "--stage", "stage-c-8-gpu-h100", "--shard", "1", "--gpus", "none", "--quiet"},
			with(map[string]string{"GITHUB_STEP_SUMMARY": summary, "GITHUB_EVENT_PATH": filepath.Join(apiFixtures(), "events", "pull_request.json")}))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if got.PRNumber != "2874" || got.HeadSHA != "5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d" || got.Fork || !slices.Equal(got.Labels, []string{"run-ci-megatron"}) || got.Deps.SGLang.Ref != "#1234" {
			t.Errorf("wanted the PR's number, head, labels and directives, got %+v", got)
		}
		if len(gotHost.Secrets) != 2 || api.Requests != 3 {
			t.Errorf("wanted both secrets and 3 requests (files only: the payload gave the PR), got %v and %d", gotHost.Secrets, api.Requests)
		}
		md, err := os.ReadFile(summary)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"### `stage-c-8-gpu-h100` (cuda), shard 1/2: ✅ passed\n", "| `tests/e2e/megatron/test_glm4_9b.py` | ✅ pass | 1 | 42 s | 0 |\n",
			"> CI skips stage-c-8-gpu-h100 on radixark/miles#2874 (rules §4: "} {
			if !strings.Contains(string(md), want) {
				t.Errorf("the step summary lacks %q:\n%s", want, md)
			}
		}
		if !strings.Contains(stderr, "::warning::CI skips stage-c-8-gpu-h100 on radixark/miles#2874") || !strings.Contains(stdout, "passed") {
			t.Errorf("wanted the skip warning and the summary, got %q and %q", stderr, stdout)
		}
		if strings.Contains(stdout+stderr+string(md), "ghp_runTokenValue") {
			t.Error("the token was printed")
		}
	})

	t.Run("fork file run", func(t *testing.T) {
		summary := filepath.Join(dir, "file.md")
		code, _, stderr := runWithEnv([]string{"file-run", "--pr", "2901", "--repo", milesRepo(), "--file", "tests/e2e/megatron/test_glm4_9b.py",
			"--gpus", "none", "--quiet", "--github-step-summary", summary}, with(nil))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !got.Fork || len(gotHost.Secrets) != 0 || got.PRNumber != "2901" {
			t.Errorf("wanted a fork run with no secret handed over, got fork=%t secrets=%v pr=%q", got.Fork, gotHost.Secrets, got.PRNumber)
		}
		md, err := os.ReadFile(summary)
		if err != nil {
			t.Fatal(err)
		}
		if want := "### `tests/e2e/megatron/test_glm4_9b.py` alone on `stage-c-4-gpu-h200` (cuda): ✅ passed\n"; !strings.HasPrefix(string(md), want) {
			t.Errorf("wanted the summary to start %q, got\n%s", want, md)
		}
	})

	t.Run("errors", func(t *testing.T) {
		// Flags --pr cannot go with are usage errors (exit 2); all but the
		// missing PR fail before GitHub is asked.
		usage := func(cmd, msg string) string { return "miles-ci " + cmd + ": " + msg + "\nusage: miles-ci " + cmd + " " }
		for _, tc := range []struct {
			args     []string
			wantCode int
			want     string
		}{
			{[]string{"run", "--pr", "2874", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--event", "schedule", "--schedule", "0 15 * * 6", "--dry-run"}, 2,
				usage("run", "--event conflicts with --pr: the pull request is the trigger (event pull_request with its labels); give one or the other")},
			{[]string{"run", "--pr", "2874", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--pr-labels-json", "[]", "--dry-run"}, 2,
				usage("run", "--pr-labels-json conflicts with --pr: the pull request is the trigger (event pull_request with its labels); give one or the other")},
			{[]string{"run", "--pr", "2874", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--release-lock", filepath.Join("..", "..", "..", "testdata", "miles-repo", "release-lock.json"), "--dry-run"}, 2,
				usage("run", "a release run takes no pull request: its refs and image come from the lockfile; drop --pr")},
			{[]string{"file-run", "--github-repo", "a/b", "--repo", milesRepo(), "--file", "tests/e2e/megatron/test_glm4_9b.py", "--dry-run"}, 2,
				usage("file-run", "--github-repo names the repository of --pr; give --pr N too")},
			{[]string{"run", "--pr", "99999", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--dry-run"}, 1,
				"::error::reading pull request radixark/miles#99999: not found (404); check --pr and --github-repo: GET "},
		} {
			api.Requests = 0
			code, _, stderr := runWithEnv(tc.args, with(nil))
			if code != tc.wantCode || !strings.HasPrefix(dropNotices(stderr), tc.want) || strings.Contains(stderr, "ghp_runTokenValue") {
				t.Errorf("%v: wanted exit %d and %q, got %d and %q", tc.args, tc.wantCode, tc.want, code, stderr)
			}
			if tc.args[2] != "99999" && api.Requests != 0 {
				t.Errorf("%v: wanted the error before GitHub is asked, got %d requests", tc.args, api.Requests)
			}
		}
	})
}

// TestRunGitHubFacts checks run takes the GitHub run facts from its
// environment inside an Actions job only, into the run env of the spec.
func TestRunGitHubFacts(t *testing.T) {
	vars := map[string]string{"GITHUB_RUN_ID": "16273849506", "GITHUB_RUN_ATTEMPT": "3", "GITHUB_EVENT_NAME": "schedule",
		"GITHUB_REF": "refs/heads/main", "GITHUB_TOKEN": "ghs_neverpassed"}
	args := []string{"run", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--dry-run", "--json"}
	runEnv := func() []stagerun.EnvVar {
		t.Helper()
		return dryRunSpec(t, vars, args...).RunEnv
	}
	local := []stagerun.EnvVar{{Name: "GITHUB_COMMIT_NAME", Value: "local_non-pr"}, {Name: "GITHUB_STEP_SUMMARY", Value: "/results/step-summary.md"}}
	if got := runEnv(); !slices.Equal(got, local) {
		t.Errorf("outside Actions: wanted %v, got %v", local, got)
	}
	vars["GITHUB_ACTIONS"] = "true"
	want := append(slices.Clone(local), stagerun.EnvVar{Name: "GITHUB_REF", Value: "refs/heads/main"},
		stagerun.EnvVar{Name: "GITHUB_EVENT_NAME", Value: "schedule"}, stagerun.EnvVar{Name: "GITHUB_RUN_ID", Value: "16273849506"},
		stagerun.EnvVar{Name: "GITHUB_RUN_ATTEMPT", Value: "3"})
	if got := runEnv(); !slices.Equal(got, want) {
		t.Errorf("in Actions: wanted %v, got %v", want, got)
	}
	vars["GITHUB_RUN_ID"] = "run-1"
	code, stdout, stderr := runCLI(t, vars, args...)
	wantErr := "::error::the GitHub Actions environment (GITHUB_ACTIONS=true): GITHUB_RUN_ID \"run-1\" is not a run id; give the digits of github.run_id, e.g. 1234567890\n"
	if code != 1 || stdout != "" || stderr != wantErr {
		t.Errorf("wanted exit 1 and %q, got %d %q %q", wantErr, code, stdout, stderr)
	}
}

// TestRunInterrupted checks SIGINT during a run exits 130 with its own
// message, not 125 as a run that could not happen.
func TestRunInterrupted(t *testing.T) {
	defer func(old func(context.Context, stagerun.Request, engine.Inputs, string, io.Writer, *report.Masker, func(string)) (stagerun.Result, error)) {
		engineRun = old
	}(engineRun)
	engineRun = func(ctx context.Context, _ stagerun.Request, _ engine.Inputs, _ string, _ io.Writer, _ *report.Masker, _ func(string)) (stagerun.Result, error) {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		<-ctx.Done()
		return stagerun.Result{}, fmt.Errorf("%w: the run step did not finish (was miles-ci's run wrapper killed?): %w", stagerun.ErrCannotRun, ctx.Err())
	}
	code, _, stderr := runCLI(t, nil, "run", "--repo", milesRepo(), "--stage", "stage-b-2-gpu-h200", "--gpus", "none", "--quiet")
	if code != ExitInterrupted || !strings.Contains(stderr, "interrupted (SIGINT or SIGTERM)") {
		t.Errorf("wanted exit %d and the interruption named, got %d, %q", ExitInterrupted, code, stderr)
	}
}
