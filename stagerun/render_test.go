package stagerun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	. "github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
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
	// log is the run's output; files are what the run leaves in ResultsDir.
	log   string
	files map[string]string
	// record replaces the run wrapper's record line; engineCode its exit status.
	record     string
	engineCode *int
	// hangAt names a command ("<plan>", "<run>") that never ends.
	hangAt string
	// gate are the metric records the wrapper kept.
	gate []report.GateRecord
}

func (e *engine) handle(x fakeExec, _ map[string]string) (string, int, map[string]string) {
	argv := strings.Join(x.argv, " ")
	if e.hangAt != "" && x.argv[0] == e.hangAt {
		return "", hangs, nil
	}
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
		rec := report.RunRecord{Ending: report.Exited, ExitCode: e.runCode, ElapsedS: 7, GateRecords: e.gate}
		if e.status != "" {
			rec.StatusLines = strings.Split(strings.TrimSuffix(e.status, "\n"), "\n")
		}
		line, _ := json.Marshal(rec)
		files := map[string]string{"<stderr>": "noise\n" + report.RecordPrefix + string(line) + "\n"}
		if e.record != "" {
			files["<stderr>"] = e.record
		}
		if e.junit != "" {
			files[JUnitPath] = e.junit
		}
		for k, v := range e.files {
			files[k] = v
		}
		code := rec.WrapperExit()
		if e.engineCode != nil {
			code = *e.engineCode
		}
		return e.log + e.status, code, files
	}
	return "", 0, nil
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestResolve checks that moving refs resolve with uncached ls-remote
// commands and the rebuilt spec fetches the commits.
func TestResolve(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", PRBody: "ci-sglang-pr: #1234\n"})
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

	req = stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", PRBody: "ci-sglang-pr: gone-branch\n"})
	_, err = Resolve(context.Background(), newFake(e.handle), req, "n")
	wantErr := "sglang ref gone-branch (pr-body line 1) does not exist: `git ls-remote origin gone-branch` found no branch, tag or pull request named gone-branch; name an existing one, a PR number (#N) or a full 40-character commit"
	if err == nil || err.Error() != wantErr {
		t.Errorf("wanted %q, got %v", wantErr, err)
	}
}

// TestResolveIsUncached checks the resolve commands carry the nonce.
func TestResolveIsUncached(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-cpu"})
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
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Models: true})
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

	unresolved := build(t, stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200"}))
	if _, err := Render(context.Background(), newFake((&engine{}).handle), unresolved); err == nil ||
		err.Error() != "unresolved dependency refs (sglang sglang-miles, megatron miles-main): run stagerun.Resolve before rendering" {
		t.Errorf("wanted Render to refuse unresolved refs, got %v", err)
	}
}

// TestRenderPatch checks the three §8 states of the ROCm patch.
func TestRenderPatch(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-c-4-gpu-mi350", Shard: shard(1), PRBody: "ci-megatron-pr: rocm-x\n"})
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
	req := stageRequest(t, usecase.Inputs{Stage: "stage-c-2-gpu-h200", Shard: shard(2), Labels: []string{"run-ci-all"}})
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
	res, err := Test(context.Background(), p, spec, "run-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Passed || s.ExitCode != 255 || s.Tests[0].Status != report.Pass || s.Tests[1].Status != report.Fail || s.Tests[2].Status != report.NotRun {
		t.Fatalf("wanted pass, fail, not-run and exit 255, got %+v", s)
	}
	want := []string{"summary.json", "junit.xml", "run.log", "plan.txt", "status.log", "exit-code", "elapsed"}
	if got := fileNames(res); !slices.Equal(got, want) {
		t.Errorf("wanted the results %v, got %v", want, got)
	}
	if got := file(res, "exit-code"); got != "255\n" {
		t.Errorf("wanted exit-code 255 from the engine, got %q", got)
	}
	wantErr := "stage-c-2-gpu-h200 shard 2/2 failed with exit code 255: " + files[1].File + " (exit 1); not run: "
	if err := s.Err(); err == nil || !strings.HasPrefix(err.Error(), wantErr) {
		t.Errorf("wanted an error starting %q, got %v", wantErr, err)
	}
}

// TestTestKeepsGateRecords: the metric records the run wrapper kept come
// back beside the results (for usecase.WithGate), not in them, and change
// nothing of the verdict; the run step had the record folder's variable.
func TestTestKeepsGateRecords(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-c-2-gpu-h200", Shard: shard(2), Labels: []string{"run-ci-all"}})
	files := req.Plan.Enabled
	record := `{"metric": "train/ppo_kl", "series": [[0, 0.1]]}`
	e := &engine{planText: req.Plan.Text(), runCode: 255, status: "[1/4] " + files[0].File + "  PASS  elapsed=12s\n[2/4] " + files[1].File + "  FAIL  elapsed=3s exit=1\n",
		gate: []report.GateRecord{{File: files[0].File, Attempt: 1, Record: &record}}}
	p, spec := prepared(t, e, req)
	if !slices.Contains(spec.RunEnv, EnvVar{"MILES_CI_GATE_RECORD_DIR", GateRecordDir}) {
		t.Errorf("wanted the record folder in the run env, got %v", spec.RunEnv)
	}
	res, err := Test(context.Background(), p, spec, "run-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GateRecords) != 1 || *res.GateRecords[0].Record != record || res.Summary.ExitCode != 255 || res.Summary.Gate != nil {
		t.Errorf("wanted the kept record beside an unchanged summary, got %+v %+v", res.GateRecords, res.Summary)
	}
	if slices.ContainsFunc(res.Files, func(f ResultFile) bool { return strings.Contains(f.Data, "train/ppo_kl") }) {
		t.Error("a record reached the results before the gate judged it")
	}
}

// TestTestPlanDrift checks that a container plan other than miles-ci's
// fails before the tests run, showing both lists.
func TestTestPlanDrift(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}})
	text := strings.Replace(req.Plan.Text(), "  - "+req.Plan.Enabled[0].File, "  - tests/e2e/test_new.py", 1)
	e := &engine{planText: text}
	p, spec := prepared(t, e, req)
	f := p.Container.(*fake)
	_, err := Test(context.Background(), p, spec, "n", nil)
	if err == nil || !errors.Is(err, ErrCannotRun) || !strings.HasPrefix(err.Error(), "miles-ci could not run or read the suite: plan drift: ") || !strings.Contains(err.Error(), "* tests/e2e/test_new.py") ||
		!strings.Contains(err.Error(), "* "+req.Plan.Enabled[0].File) {
		t.Fatalf("wanted a plan drift error naming both files, got %v", err)
	}
	if slices.ContainsFunc(f.eng.ran, func(c string) bool { return strings.HasPrefix(c, "<run>") }) {
		t.Errorf("wanted no test run after a plan drift, got %v", f.eng.ran)
	}
}

// TestTestCPU checks a CPU run reads pytest's JUnit report and keeps it.
func TestTestCPU(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-cpu"})
	e := &engine{planText: req.Plan.Text(), runCode: 1, junit: `<?xml version="1.0"?>
<testsuites><testsuite name="pytest">
<testcase classname="` + strings.ReplaceAll(strings.TrimSuffix(req.Plan.Enabled[0].File, ".py"), "/", ".") + `" name="test_a" time="0.5"><failure message="boom"/></testcase>
</testsuite></testsuites>`}
	p, spec := prepared(t, e, req)
	res, err := Test(context.Background(), p, spec, "n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Tests[0].Status != report.Fail || res.Summary.Tests[1].Status != report.NotRun {
		t.Errorf("wanted fail then not-run from the JUnit report, got %+v", res.Summary.Tests)
	}
	if got := file(res, "junit.xml"); got != e.junit {
		t.Errorf("wanted pytest's own junit.xml kept, got %q", got)
	}
}

func fileNames(r Result) []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, f.Name)
	}
	return out
}

func file(r Result, name string) string {
	for _, f := range r.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return "<none>"
}

// TestTestResultsAreMilesCIs checks what the tests leave in ResultsDir: a
// symlink, a device or FIFO, or an oversized or malformed report is never
// read; other regular files become artifacts/; every file is masked; and
// the verdict comes from the engine and the record, not from a file.
func TestTestResultsAreMilesCIs(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-cpu"})
	const secret = "hf-secret-0123456789"
	m, err := report.NewMasker(map[string]string{"HF_TOKEN": secret})
	if err != nil {
		t.Fatal(err)
	}
	module := strings.ReplaceAll(strings.TrimSuffix(req.Plan.Enabled[0].File, ".py"), "/", ".")
	junit := `<testsuites><testsuite><testcase classname="` + module + `" name="t"><failure message="` + secret + `"/></testcase></testsuite></testsuites>`
	for _, tc := range []struct {
		name      string
		e         engine
		wantErr   string
		wantFiles []string
		wantNote  string
	}{
		{
			name: "a secret in the log, the step summary, an artifact and pytest's report",
			e: engine{runCode: 1, log: "token " + secret + "\n", junit: junit, files: map[string]string{
				StepSummaryPath: "# " + secret, ResultsDir + "/token.txt": secret, ResultsDir + "/exit-code": "0\n"}},
			wantFiles: []string{"summary.json", "junit.xml", "run.log", "plan.txt", "status.log", "exit-code", "elapsed", "step-summary.md", "artifacts/token.txt"},
		},
		{
			name:      "a symlinked run.log, a FIFO artifact and a symlinked junit.xml",
			e:         engine{runCode: 1, files: map[string]string{JUnitPath: "<symlink>", ResultsDir + "/run.log": "<symlink>", ResultsDir + "/pipe": "<fifo>"}},
			wantFiles: []string{"summary.json", "junit.xml", "run.log", "plan.txt", "status.log", "exit-code", "elapsed"},
			wantNote:  "pytest's junit.xml is a symlink, not a regular file; not read; the files' outcomes come from pytest's -v lines in run.log",
		},
		{
			name:      "a malformed junit.xml",
			e:         engine{runCode: 1, junit: "<testsuites><testcase"},
			wantFiles: []string{"summary.json", "junit.xml", "run.log", "plan.txt", "status.log", "exit-code", "elapsed"},
			wantNote:  "pytest's junit.xml is malformed (junit.xml: XML syntax error on line 1: unexpected EOF); the files' outcomes come from pytest's -v lines in run.log",
		},
		{
			name:    "a record forged to exit 0 while the engine says 1",
			e:       engine{runCode: 0, engineCode: intp(1)},
			wantErr: "miles-ci could not run or read the suite: the engine recorded exit status 1 for the run step, but its record says exit 0",
		},
		{
			name:    "no record (the wrapper did not finish)",
			e:       engine{record: "killed\n"},
			wantErr: "miles-ci could not run or read the suite: the run wrapper left no record",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.e
			e.planText = req.Plan.Text()
			p, spec := prepared(t, &e, req)
			res, err := Test(context.Background(), p, spec, "n", m)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || !errors.Is(err, ErrCannotRun) {
					t.Fatalf("wanted an error starting %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fileNames(res); !slices.Equal(got, tc.wantFiles) {
				t.Errorf("wanted files %v, got %v", tc.wantFiles, got)
			}
			for _, f := range res.Files {
				if strings.Contains(f.Data, secret) {
					t.Errorf("%s holds the secret: %q", f.Name, f.Data)
				}
			}
			if got := file(res, "exit-code"); got != "1\n" || res.Summary.Passed {
				t.Errorf("wanted exit-code 1 from the engine and a failed run, got %q, %+v", got, res.Summary)
			}
			if tc.wantNote != "" && !slices.Contains(res.Summary.Notes, tc.wantNote) {
				t.Errorf("wanted the note %q, got %q", tc.wantNote, res.Summary.Notes)
			}
		})
	}
}

func intp(n int) *int { return &n }

// TestRenderForkHasNoRunCaches checks a fork PR's run phase has every cache
// volume unmounted (after the cached install steps used them), and other
// runs keep them.
func TestRenderForkHasNoRunCaches(t *testing.T) {
	for _, fork := range []bool{false, true} {
		req := stageRequest(t, usecase.Inputs{Stage: "stage-b-cpu", Fork: fork})
		p, spec := prepared(t, &engine{}, req)
		ops := p.Container.(*fake).ops
		source := slices.IndexFunc(ops, func(op string) bool { return strings.HasPrefix(op, "source ") })
		var unmounted []string
		for i, op := range ops {
			if path, ok := strings.CutPrefix(op, "unmount "); ok {
				unmounted = append(unmounted, path)
				if i < source {
					t.Errorf("fork=%t: wanted the caches unmounted after the source, got %q at %d (source at %d)", fork, op, i, source)
				}
			}
		}
		var want []string
		if fork {
			for _, c := range spec.Caches {
				want = append(want, c.Path)
			}
		}
		if !slices.Equal(unmounted, want) || (spec.CachesWithheld != "") != fork {
			t.Errorf("fork=%t: wanted %v unmounted, got %v (%q)", fork, want, unmounted, spec.CachesWithheld)
		}
	}
}

// TestTestArtifactsAreBounded checks artifacts/ takes at most 32 files of
// at most 1 MiB each, and names what it leaves out.
func TestTestArtifactsAreBounded(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}})
	files := map[string]string{ResultsDir + "/big.bin": strings.Repeat("x", 1<<20+1), ResultsDir + "/.hidden": "h"}
	for i := 0; i < 40; i++ {
		files[ResultsDir+"/f"+itoa(100+i)] = "x"
	}
	e := &engine{planText: req.Plan.Text(), runCode: 255, files: files}
	p, spec := prepared(t, e, req)
	res, err := Test(context.Background(), p, spec, "n", nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range res.Files {
		if strings.HasPrefix(f.Name, "artifacts/") {
			n++
		}
	}
	note := res.Summary.Notes[len(res.Summary.Notes)-1]
	if n != 32 || !strings.Contains(note, `"big.bin"`) || !strings.Contains(note, `".hidden"`) || !strings.Contains(note, `"f139"`) {
		t.Errorf("wanted 32 artifacts and the rest named, got %d and %q", n, note)
	}
}

// TestTestPlanFromContainer checks a run whose checkout miles-ci cannot
// plan offline: the container's own plan gives the files the results
// report on (no drift check), and the note says why.
func TestTestPlanFromContainer(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}})
	text := strings.Replace(req.Plan.Text(), "  - "+req.Plan.Enabled[0].File, "  - tests/e2e/test_new.py", 1)
	files := []string{"tests/e2e/test_new.py"}
	for _, f := range req.Plan.Enabled[1:] {
		files = append(files, f.File)
	}
	req.Plan = &policy.Plan{HW: req.Plan.HW, Suite: req.Plan.Suite, Cadence: req.Plan.Cadence, Enabled: []policy.PlannedTest{}, Skipped: []policy.SkippedTest{}}
	req.PlanUnavailable = "miles-ci's offline plan was not available (x)"
	req.Notes = []string{req.PlanUnavailable + "; the container's own run_suite.py --list-only is the plan"}
	e := &engine{planText: text, runCode: 255, status: fmt.Sprintf("[1/%d] tests/e2e/test_new.py  PASS  elapsed=1s\n", len(files))}
	p, spec := prepared(t, e, req)
	if spec.CheckPlan || len(spec.Tests) != 0 {
		t.Fatalf("wanted no drift check and no tests before the run, got %t %v", spec.CheckPlan, spec.Tests)
	}
	res, err := Test(context.Background(), p, spec, "n", nil)
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

// TestRenderForkMountsNoCache checks no step of a fork PR's container, on
// any backend, has a cache volume mounted: its requirements, reconciler,
// verify_source_resolution.py and pip install -e run its code before the
// run phase (issue 22, case 1).
func TestRenderForkMountsNoCache(t *testing.T) {
	for _, in := range []usecase.Inputs{
		{Stage: "stage-b-cpu", Fork: true},
		{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}, Fork: true},
		{Stage: "stage-c-4-gpu-mi350", Shard: shard(1), Labels: []string{"run-ci-amd"}, Fork: true},
	} {
		t.Run(in.Stage, func(t *testing.T) {
			p, spec := prepared(t, &engine{}, stageRequest(t, in))
			for _, op := range p.Container.(*fake).ops {
				if strings.HasPrefix(op, "cache ") {
					t.Errorf("wanted no cache volume in a fork's container, got %q", op)
				}
			}
			if len(spec.Caches) != 0 || spec.CachesWithheld == "" {
				t.Errorf("wanted no caches and a reason, got %v (%q)", spec.Caches, spec.CachesWithheld)
			}
		})
	}
}

// TestTestDeadline checks miles-ci's one deadline, kept outside the
// container, ends a run whose plan step or run step never ends (a sleeping
// --list-only or verify_source_resolution.py, a stopped wrapper): the
// verdict is timeout, exit 124, the next file timed out and the rest not
// run, with a whole results folder (issue 22, case 2).
func TestTestDeadline(t *testing.T) {
	defer SetDeadlineGrace(SetDeadlineGrace(50 * time.Millisecond))
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}})
	for _, at := range []string{"<plan>", "<run>"} {
		t.Run(at, func(t *testing.T) {
			p, spec := prepared(t, &engine{planText: req.Plan.Text(), hangAt: at}, req)
			spec.TimeoutS = 0
			start := time.Now()
			res, err := Test(context.Background(), p, spec, "n", nil)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			if s.Verdict != report.TimedOutRun || s.ExitCode != report.ExitTimeout || s.ExitStatus() != report.ExitTimeout || time.Since(start) > 10*time.Second {
				t.Errorf("wanted a timeout (exit 124) within the deadline, got %s %d after %s", s.Verdict, s.ExitCode, time.Since(start))
			}
			var statuses []report.Status
			for _, f := range s.Tests {
				statuses = append(statuses, f.Status)
			}
			if len(statuses) < 2 || statuses[0] != report.Timeout || slices.ContainsFunc(statuses[1:], func(st report.Status) bool { return st != report.NotRun }) {
				t.Errorf("wanted the first file timeout and the rest not-run, got %v", statuses)
			}
			if !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "kept outside the container") }) {
				t.Errorf("wanted a note naming the deadline, got %q", s.Notes)
			}
			var names []string
			for _, f := range res.Files {
				names = append(names, f.Name)
			}
			if !slices.Equal(names, []string{SummaryFile, JUnitFile, RunLogFile, PlanFile, StatusLogFile, ExitCodeFile, ElapsedFile}) {
				t.Errorf("wanted a whole results folder, got %v", names)
			}
		})
	}
}

// TestTestPlanOverCap checks a --list-only that prints more than miles-ci
// reads fails the run before any test, naming the cap (issue 22, case 9).
func TestTestPlanOverCap(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}})
	p, spec := prepared(t, &engine{planText: strings.Repeat("x", 1<<20+1)}, req)
	_, err := Test(context.Background(), p, spec, "n", nil)
	if !errors.Is(err, ErrCannotRun) || !strings.Contains(err.Error(), "printed more than the 1048576 bytes miles-ci reads") {
		t.Errorf("wanted a cannot-run error naming the cap, got %v", err)
	}
}

// TestTestLeftOutFilesAreCounted checks 10,000 files left in /results give
// a count and the first names, not a list of megabytes (issue 22, case 6),
// and a file named after a secret value is neither exported nor named
// (case 8).
func TestTestLeftOutFilesAreCounted(t *testing.T) {
	const secret = "wandb-secret-0123456789"
	m, err := report.NewMasker(map[string]string{"WANDB_API_KEY": secret})
	if err != nil {
		t.Fatal(err)
	}
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}})
	files := map[string]string{ResultsDir + "/" + secret: "x", ResultsDir + "/key-" + secret + ".txt": "x"}
	for i := 0; i < 10000; i++ {
		files[ResultsDir+"/"+fmt.Sprintf("x%06d", i)] = "x"
	}
	p, spec := prepared(t, &engine{planText: req.Plan.Text(), runCode: 255, files: files}, req)
	res, err := Test(context.Background(), p, spec, "n", m)
	if err != nil {
		t.Fatal(err)
	}
	var size int
	for _, f := range res.Files {
		size += len(f.Name) + len(f.Data)
		if strings.Contains(f.Name, secret) || strings.Contains(f.Data, secret) {
			t.Errorf("wanted no secret in the results, got it in %s", f.Name)
		}
	}
	note := res.Summary.Notes[len(res.Summary.Notes)-1]
	if size > 64<<10 || !strings.Contains(note, "9970 file(s)") || !strings.Contains(note, `"key-***.txt", "***", "x000032"`) || !strings.Contains(note, "and 9950 more") {
		t.Errorf("wanted a short note with the count, got %d bytes of results and %q", size, note)
	}
}
