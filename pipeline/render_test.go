package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/internal/runreq"
	. "github.com/radixark/miles-ci/pipeline"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// engine answers the commands of a stage container: ls-remote with fixed
// commits, the patch checks with the given exit codes, the plan with
// miles-ci's own plan text (or planText), and the run with status lines.
type engine struct {
	check, reverse int    // exit codes of git apply --check and --reverse --check
	planText       string // what --list-only prints
	runCode        int
	status         string
	junit          string
}

func (e *engine) handle(x fakeExec, _ map[string]string) (string, int, map[string]string) {
	argv := strings.Join(x.argv, " ")
	switch {
	case strings.HasPrefix(argv, "git ls-remote"):
		ref := x.argv[len(x.argv)-1]
		switch ref {
		case "sglang-miles":
			return sglangHead + "\trefs/heads/sglang-miles\n", 0, nil
		case "miles-main":
			return megatronHead + "\trefs/heads/miles-main\n", 0, nil
		case "refs/pull/1234/head":
			return "3333333333333333333333333333333333333333\trefs/pull/1234/head\n", 0, nil
		}
		return "", 0, nil
	case strings.HasPrefix(argv, "git apply --check"):
		return "", e.check, nil
	case strings.HasPrefix(argv, "git apply --reverse --check"):
		return "", e.reverse, nil
	case x.argv[0] == "<plan>":
		return e.planText, 0, map[string]string{ResultsDir + "/plan.txt": e.planText}
	case x.argv[0] == "<run>":
		files := map[string]string{ExitCodePath: itoa(e.runCode) + "\n", StatusLogPath: e.status, ElapsedPath: "7\n", RunLogPath: "log\n"}
		if e.junit != "" {
			files[JUnitPath] = e.junit
		}
		return "", 0, files
	}
	return "", 0, nil
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestResolve checks that moving refs resolve with uncached ls-remote
// commands and the rebuilt spec fetches the commits.
func TestResolve(t *testing.T) {
	req := stageRequest(t, runreq.Inputs{Stage: "stage-b-2-gpu-h200", PRBody: "ci-sglang-pr: #1234\n"})
	e := &engine{}
	f := newFake(e.handle)
	got, err := Resolve(context.Background(), f, req, "nonce-1")
	if err != nil {
		t.Fatal(err)
	}
	want := Commits{SGLang: "3333333333333333333333333333333333333333", Megatron: megatronHead}
	if got.Commits != want {
		t.Fatalf("wanted %+v, got %+v", want, got.Commits)
	}
	spec := build(t, got)
	if len(spec.Resolve) != 0 || !slices.Contains(listing(spec), "deps exec @/sgl-workspace/sglang: git fetch origin "+want.SGLang) {
		t.Errorf("wanted the spec to fetch the resolved commit, got %v", listing(spec))
	}
	if len(f.eng.ran) != 2 {
		t.Errorf("wanted two ls-remote commands, got %v", f.eng.ran)
	}

	req = stageRequest(t, runreq.Inputs{Stage: "stage-b-2-gpu-h200", PRBody: "ci-sglang-pr: gone-branch\n"})
	_, err = Resolve(context.Background(), newFake(e.handle), req, "n")
	wantErr := "sglang ref gone-branch (pr-body line 1) does not exist: `git ls-remote origin gone-branch` found no branch, tag or pull request named gone-branch; name an existing one, a PR number (#N) or a full 40-character commit"
	if err == nil || err.Error() != wantErr {
		t.Errorf("wanted %q, got %v", wantErr, err)
	}
}

// TestResolveIsUncached checks the resolve commands carry the nonce.
func TestResolveIsUncached(t *testing.T) {
	req := stageRequest(t, runreq.Inputs{Stage: "stage-b-cpu"})
	var envs []string
	f := newFake(func(x fakeExec, files map[string]string) (string, int, map[string]string) {
		envs = append(envs, x.env[ResolveNonceEnv])
		return (&engine{}).handle(x, files)
	})
	if _, err := Resolve(context.Background(), f, req, "n-42"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(envs, []string{"n-42", "n-42"}) {
		t.Errorf("wanted the nonce on both resolve commands, got %v", envs)
	}
}

// TestRenderOrder checks the layer order of the rendered container: image,
// static env, caches, requirements, dependencies, source, then the per-run
// GPUs, env, /dev/shm and secrets.
func TestRenderOrder(t *testing.T) {
	req := stageRequest(t, runreq.Inputs{Stage: "stage-b-2-gpu-h200", Models: true})
	req.Commits = Commits{SGLang: sglangHead, Megatron: megatronHead}
	spec := build(t, req)
	p, err := Render(context.Background(), newFake((&engine{}).handle), spec)
	if err != nil {
		t.Fatal(err)
	}
	ops := p.Container.(*fake).ops
	index := func(prefix string) int {
		i := slices.IndexFunc(ops, func(op string) bool { return strings.HasPrefix(op, prefix) })
		if i < 0 {
			t.Fatalf("no op %q in %v", prefix, ops)
		}
		return i
	}
	order := []string{
		"from radixark/miles:dev",
		"env CI=true",
		"cache miles-ci:pip /root/.cache/pip SHARED",
		"file requirements.txt /__w/miles/miles/requirements.txt",
		"exec <reconcile>",
		"exec git fetch origin " + sglangHead,
		"exec git fetch origin " + megatronHead,
		"source /__w/miles/miles",
		"exec python tests/ci/verify_source_resolution.py",
		"exec <stamp> source",
		"gpus ",
		"env GITHUB_COMMIT_NAME=local_non-pr",
		"data models /root/models",
		"tmpfs /dev/shm 34359738368",
		"secret WANDB_API_KEY",
		"secret NEON_DATABASE_URL",
	}
	last := -1
	for _, op := range order {
		i := index(op)
		if i <= last {
			t.Fatalf("wanted %q after %q, got ops\n%s", op, ops[last], strings.Join(ops, "\n"))
		}
		last = i
	}
	if slices.ContainsFunc(ops, func(op string) bool { return strings.Contains(op, "<run>") || strings.Contains(op, "<plan>") }) {
		t.Errorf("wanted Render to leave the run steps to Test, got %v", ops)
	}
	if ops[len(ops)-1] != "workdir /__w/miles/miles" {
		t.Errorf("wanted the prepared container to open in the workspace, got %q", ops[len(ops)-1])
	}

	unresolved := build(t, stageRequest(t, runreq.Inputs{Stage: "stage-b-2-gpu-h200"}))
	if _, err := Render(context.Background(), newFake((&engine{}).handle), unresolved); err == nil ||
		err.Error() != "unresolved dependency refs (sglang sglang-miles, megatron miles-main): run pipeline.Resolve before rendering" {
		t.Errorf("wanted Render to refuse unresolved refs, got %v", err)
	}
}

// TestRenderPatch checks the three §8 states of the ROCm patch.
func TestRenderPatch(t *testing.T) {
	req := stageRequest(t, runreq.Inputs{Stage: "stage-c-4-gpu-mi350", Shard: shard(0), PRBody: "ci-megatron-pr: rocm-x\n"})
	req.Commits.Megatron = megatronHead
	spec := build(t, req)
	patch := Workspace + "/docker/amd_patch/latest/megatron.patch"
	for _, tc := range []struct {
		name           string
		check, reverse int
		applied        bool
		note, err      string
	}{
		{"applies", 0, 1, true, "ROCm patch: applied to Megatron-LM rocm-x", ""},
		{"already present", 1, 0, false, "ROCm patch: already present in Megatron-LM rocm-x", ""},
		{"incompatible", 1, 1, false, "", "Selected Megatron ref is incompatible with the ROCm patch: " + patch +
			" neither applies to nor is already present in Megatron-LM rocm-x (/root/Megatron-LM); pick a Megatron-LM ref based on miles-main or update docker/amd_patch/latest/megatron.patch to match it"},
		{"unreadable patch", 128, 0, false, "", "git apply --check " + patch + " in /root/Megatron-LM failed with exit status 128 (git could not read the patch; check that " + patch + " is a patch file): "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &engine{check: tc.check, reverse: tc.reverse}
			p, err := Render(context.Background(), newFake(e.handle), spec)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("wanted %q, got %v", tc.err, err)
				}
				if tc.check == 1 && !errors.Is(err, deps.ErrPatchIncompatible) {
					t.Errorf("wanted errors.Is(err, deps.ErrPatchIncompatible)")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ops := p.Container.(*fake).ops
			applied := slices.Contains(ops, "exec git apply "+patch)
			install := slices.Index(ops, "exec pip install -e . --no-deps --break-system-packages")
			if applied != tc.applied || install < 0 || (applied && slices.Index(ops, "exec git apply "+patch) > install) {
				t.Errorf("wanted git apply in the chain: %t (before the install), got\n%s", tc.applied, strings.Join(ops, "\n"))
			}
			if slices.ContainsFunc(ops, func(op string) bool { return strings.Contains(op, "--check") }) {
				t.Errorf("wanted the checks kept out of the chain, got %v", ops)
			}
			if !slices.Equal(p.Notes, []string{tc.note}) {
				t.Errorf("wanted note %q, got %v", tc.note, p.Notes)
			}
		})
	}
}

// prepared renders a resolved request on a fake engine.
func prepared(t *testing.T, e *engine, req Request) (Prepared, Spec) {
	t.Helper()
	p, spec, err := Prepare(context.Background(), newFake(e.handle), req, "nonce")
	if err != nil {
		t.Fatal(err)
	}
	return p, spec
}

// TestTestGPU checks a GPU run: the plan check passes, a fail-fast stop
// leaves later files not run, and summary.json and junit.xml are written.
func TestTestGPU(t *testing.T) {
	req := stageRequest(t, runreq.Inputs{Stage: "stage-c-2-gpu-h200", Shard: shard(1), Labels: []string{"run-ci-all"}})
	if len(req.Plan.Enabled) < 3 {
		t.Fatalf("wanted a shard of 3 or more files, got %d", len(req.Plan.Enabled))
	}
	files := req.Plan.Enabled
	e := &engine{planText: req.Plan.Text(), runCode: 255, status: strings.Join([]string{
		"[1/4] " + files[0].File + "  PASS  elapsed=12s",
		"[2/4] " + files[1].File + "  FAIL  elapsed=3s exit=1",
		"",
	}, "\n")}
	p, spec := prepared(t, e, req)
	res, err := Test(context.Background(), p, spec, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Passed || s.ExitCode != 255 || s.Tests[0].Status != report.Pass || s.Tests[1].Status != report.Fail || s.Tests[2].Status != report.NotRun {
		t.Fatalf("wanted pass, fail, not-run and exit 255, got %+v", s)
	}
	ops := res.Container.(*fake).ops
	for _, want := range []string{"env MILES_CI_RUN_ID=run-1", "newfile /results/summary.json", "newfile /results/junit.xml"} {
		if !slices.Contains(ops, want) {
			t.Errorf("wanted op %q, got %v", want, ops)
		}
	}
	wantErr := "stage-c-2-gpu-h200 shard 2/2 failed with exit code 255: " + files[1].File + " (exit 1); not run: "
	if err := s.Err(); err == nil || !strings.HasPrefix(err.Error(), wantErr) {
		t.Errorf("wanted an error starting %q, got %v", wantErr, err)
	}
}

// TestTestPlanDrift checks that a container plan other than miles-ci's
// fails before the tests run, showing both lists.
func TestTestPlanDrift(t *testing.T) {
	req := stageRequest(t, runreq.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}})
	text := strings.Replace(req.Plan.Text(), "  - "+req.Plan.Enabled[0].File, "  - tests/e2e/test_new.py", 1)
	e := &engine{planText: text}
	p, spec := prepared(t, e, req)
	f := p.Container.(*fake)
	_, err := Test(context.Background(), p, spec, "n")
	if err == nil || !strings.HasPrefix(err.Error(), "plan drift: ") || !strings.Contains(err.Error(), "* tests/e2e/test_new.py") ||
		!strings.Contains(err.Error(), "* "+req.Plan.Enabled[0].File) {
		t.Fatalf("wanted a plan drift error naming both files, got %v", err)
	}
	if slices.ContainsFunc(f.eng.ran, func(c string) bool { return strings.HasPrefix(c, "<run>") }) {
		t.Errorf("wanted no test run after a plan drift, got %v", f.eng.ran)
	}
}

// TestTestCPU checks a CPU run reads pytest's JUnit report and keeps it.
func TestTestCPU(t *testing.T) {
	req := stageRequest(t, runreq.Inputs{Stage: "stage-b-cpu"})
	e := &engine{planText: req.Plan.Text(), runCode: 1, junit: `<?xml version="1.0"?>
<testsuites><testsuite name="pytest">
<testcase classname="` + strings.ReplaceAll(strings.TrimSuffix(req.Plan.Enabled[0].File, ".py"), "/", ".") + `" name="test_a" time="0.5"><failure message="boom"/></testcase>
</testsuite></testsuites>`}
	p, spec := prepared(t, e, req)
	res, err := Test(context.Background(), p, spec, "n")
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Tests[0].Status != report.Fail || res.Summary.Tests[1].Status != report.NotRun {
		t.Errorf("wanted fail then not-run from the JUnit report, got %+v", res.Summary.Tests)
	}
	if slices.Contains(res.Container.(*fake).ops, "newfile /results/junit.xml") {
		t.Errorf("wanted pytest's own junit.xml kept")
	}
}

// TestTestPlanFromContainer checks a run whose checkout miles-ci cannot
// plan offline: the container's own plan gives the files the results
// report on (no drift check), and the note says why.
func TestTestPlanFromContainer(t *testing.T) {
	req := stageRequest(t, runreq.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}})
	text := strings.Replace(req.Plan.Text(), "  - "+req.Plan.Enabled[0].File, "  - tests/e2e/test_new.py", 1)
	files := []string{"tests/e2e/test_new.py"}
	for _, f := range req.Plan.Enabled[1:] {
		files = append(files, f.File)
	}
	req.Plan = &policy.Plan{HW: req.Plan.HW, Suite: req.Plan.Suite, Cadence: req.Plan.Cadence, Enabled: []policy.PlannedTest{}, Skipped: []policy.SkippedTest{}}
	req.PlanUnavailable = "miles-ci's offline plan was not available (x)"
	req.Notes = []string{req.PlanUnavailable + "; the container's own run_suite.py --list-only is the plan"}
	e := &engine{planText: text, status: "[1/9] tests/e2e/test_new.py  PASS  elapsed=1s\n"}
	p, spec := prepared(t, e, req)
	if spec.CheckPlan || len(spec.Tests) != 0 {
		t.Fatalf("wanted no drift check and no tests before the run, got %t %v", spec.CheckPlan, spec.Tests)
	}
	res, err := Test(context.Background(), p, spec, "n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range res.Summary.Tests {
		got = append(got, tr.File)
	}
	if !slices.Equal(got, files) || res.Summary.Tests[0].Status != report.Pass {
		t.Errorf("wanted the container's files %v, the first passing, got %+v", files, res.Summary.Tests)
	}
	if !slices.Contains(res.Summary.Notes, req.Notes[0]) {
		t.Errorf("wanted the note %q, got %q", req.Notes[0], res.Summary.Notes)
	}
}
