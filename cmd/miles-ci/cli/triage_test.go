package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// checkoutSession is an engine session that says which checkout it has.
type checkoutSession struct{ repo string }

type checkoutContainer struct {
	stagerun.Container
	repo string
}

func (s checkoutSession) Container() stagerun.Container { return checkoutContainer{repo: s.repo} }
func (checkoutSession) Close() error                    { return nil }
func (checkoutSession) Check(context.Context) error     { return nil }

// fakeTriageEngine runs a file by its name: test_data_source.py fails at
// the head only, test_chunked_gae.py on odd attempts (its seed is
// GITHUB_RUN_ATTEMPT), the rest pass.
func fakeTriageEngine(t *testing.T) {
	t.Helper()
	oldConnect, oldRun, oldResolve := ciConnect, ciShardRun, triageResolve
	t.Cleanup(func() { ciConnect, ciShardRun, triageResolve = oldConnect, oldRun, oldResolve })
	ciConnect = func(_ context.Context, in engine.Inputs, _ io.Writer) (ciSession, error) {
		return checkoutSession{repo: in.Repo}, nil
	}
	triageResolve = func(_ context.Context, _ stagerun.Container, req stagerun.Request, _ string) (stagerun.Request, error) {
		return req, nil
	}
	ciShardRun = func(_ context.Context, c stagerun.Container, req stagerun.Request, _ string, _ *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		atBase := strings.Contains(c.(checkoutContainer).repo, "miles-ci-base-") // usecase.BaseCheckout's folder
		n, _ := strconv.Atoi(req.GitHub.RunAttempt)
		fail := false
		switch filepath.Base(req.File.File) {
		case "test_data_source.py":
			fail = !atBase
		case "test_chunked_gae.py":
			fail = n%2 == 1
		}
		s := report.Summary{HW: req.Stage.Backend, Suite: req.Stage.Name, Verdict: report.Passed, Passed: true}
		exit := 0
		tr := report.TestResult{File: req.File.File, Status: report.Pass, Attempts: 1, ElapsedS: 2, ExitCode: &exit, EstTime: 30, Tries: []report.Try{{Status: report.Pass, ElapsedS: 2}}}
		if fail {
			s.Verdict, s.Passed, s.ExitCode = report.Failed, false, 1
			tr.Status, tr.Tries[0].Status = report.Fail, report.Fail
		}
		s.Tests = []report.TestResult{tr}
		return stagerun.Result{Summary: s, Files: []stagerun.ResultFile{{Name: "run.log", Data: "attempt " + req.GitHub.RunAttempt + "\n"}}}, stagerun.Spec{}, nil
	}
}

func gitCheckout(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, milesRepo(), dir)
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	git("checkout", "-q", "-b", "change")
	testfiles.Write(t, dir, "CHANGE.md", "x\n")
	git("add", "-A")
	git("commit", "-q", "-m", "head")
	return dir
}

func TestTriage(t *testing.T) {
	repo := gitCheckout(t)
	fakeTriageEngine(t)
	dir := t.TempDir()
	out, db := filepath.Join(dir, "triage"), filepath.Join(dir, "h.db")
	code, stdout, stderr := runCLI(t, nil, "triage", "--repo", repo, "--base", "main", "--gpus", "none", "--quiet", "--out", out, "--record", "--db", db,
		"--file", "tests/fast/test_data_source.py", "tests/fast/test_chunked_gae.py", "tests/fast/test_rollout_buffer.py")
	if code != 1 {
		t.Fatalf("wanted exit 1 (a regression), got %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"tests/fast/test_data_source.py  regression  head 0 pass / 3 fail, base 3 pass / 0 fail",
		"tests/fast/test_chunked_gae.py  flaky  head 1 pass / 1 fail",
		"tests/fast/test_rollout_buffer.py  not-reproduced  head 3 pass / 0 fail",
		"head #1  fail", filepath.Join(out, "tests__fast__test_data_source", "base-3", "run.log"),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("wanted %q in the output, got\n%s", want, stdout)
		}
	}
	if data, err := os.ReadFile(filepath.Join(out, "tests__fast__test_chunked_gae", "head-2", "run.log")); err != nil || string(data) != "attempt 2\n" {
		t.Errorf("wanted the attempt's run.log, got %q %v", data, err)
	}
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	for _, want := range []string{`<table id="verdicts">`, "regression", "flaky", "not-reproduced", `<a href="tests__fast__test_chunked_gae/head-2/run.log">run.log</a>`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("wanted %q in report.html, got\n%s", want, page)
		}
	}
	if !strings.Contains(stderr, "recorded 11 triage attempt(s) in "+db+" (event triage)") {
		t.Errorf("wanted the 11 attempts recorded, got\n%s", stderr)
	}
	code, stdout, _ = runCLI(t, nil, "history", "flaky", "--db", db)
	if code != 0 || !strings.Contains(stdout, "tests/fast/test_chunked_gae.py (CPU, stage-a-cpu)") || !strings.Contains(stdout, ": flaky (head 1 pass / 1 fail)") ||
		strings.Contains(stdout, "test_data_source") {
		t.Errorf("wanted history flaky to show the triage's flaky file only, got %d\n%s", code, stdout)
	}
	if code, _, stderr := runCLI(t, nil, "triage", "--repo", repo, "--base", "main", "--results", dir, "--file", "x.py"); code != 2 || !strings.Contains(stderr, "one of the two") {
		t.Errorf("wanted --file with --results refused, got %d\n%s", code, stderr)
	}
}

// TestTriageReadsACIFolder: triage --results reads the folder ci writes, a
// sharded stage's STAGE/2-of-4/ and an unsharded one's STAGE/, through the
// one reader of results folders (issue 40 item 1: it looked for STAGE/1/,
// so step 3 of docs/when-ci-fails.md failed).
func TestTriageReadsACIFolder(t *testing.T) {
	repo := gitCheckout(t)
	fakeCIEngine(t, map[string]bool{"stage-a-cpu/1": true, "stage-b-cpu/0": true})
	failing := map[string]string{"stage-a-cpu": "tests/fast/test_data_source.py", "stage-b-cpu": "tests/fast/test_chunked_gae.py"}
	inner := ciShardRun
	ciShardRun = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		res, spec, err := inner(ctx, c, req, nonce, m)
		if !res.Summary.Passed {
			res.Summary.Tests[0].File = failing[req.Stage.Name]
			js, _ := json.Marshal(res.Summary)
			res.Files[0].Data = string(js)
		}
		return res, spec, err
	}
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	if code, _, stderr := runCLI(t, nil, "ci", "--repo", repo, "--event", "pull_request", "--gpus", "none", "--quiet", "--only", "cpu", "--results", results); code != 1 {
		t.Fatalf("the ci run: wanted exit 1, got %d\n%s", code, stderr)
	}
	for _, d := range []string{"stage-a-cpu/2-of-4", "stage-b-cpu"} {
		if _, err := os.Stat(filepath.Join(results, d, "summary.json")); err != nil {
			t.Fatalf("wanted the ci layout's %s: %v", d, err)
		}
	}
	fakeTriageEngine(t)
	code, stdout, stderr := runCLI(t, nil, "triage", "--repo", repo, "--base", "main", "--gpus", "none", "--quiet", "--out", filepath.Join(dir, "triage"), "--results", results)
	if code != 1 || !strings.Contains(stdout, "tests/fast/test_data_source.py  regression") || !strings.Contains(stdout, "tests/fast/test_chunked_gae.py  flaky") {
		t.Errorf("wanted both failed files triaged, got %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestTriageMistypedFile: a file the head checkout does not have is a
// usage error naming the nearest test file, and nothing is written in the
// current folder (issue 40: an inconclusive verdict left miles-ci-triage/
// and its lock file in the checkout); so are devices and files the head
// refuses.
func TestTriageMistypedFile(t *testing.T) {
	repo := gitCheckout(t)
	fakeTriageEngine(t)
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(repo); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(".")
	code, stdout, stderr := runCLI(t, nil, "triage", "--base", "main", "--gpus", "none", "--quiet", "--file", "tests/fast/test_dat_source.py")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "--file tests/fast/test_dat_source.py does not exist in the head checkout") ||
		!strings.Contains(stderr, "did you mean tests/fast/test_data_source.py?") {
		t.Errorf("wanted a usage error naming the nearest file, got %d\n%s\n%s", code, stdout, stderr)
	}
	if after, _ := os.ReadDir("."); len(after) != len(before) {
		t.Errorf("wanted nothing written in the checkout, got %v", after)
	}
	// What the head would refuse every attempt for is refused before
	// anything runs too: a GPU model where run takes device ids, a file that
	// is not a registered test, a file the head disables (each was an
	// inconclusive verdict, exit 125, after the engine started).
	for _, c := range []struct{ flag, file, want string }{
		{"h20:0-7", "tests/fast/test_data_source.py", `--gpus "h20:0-7": "h20:0-7" is not a device id`},
		{"none", "README.md", "--file README.md: the head cannot run it: "},
		{"none", "tests/fast/backends/test_fsdp_utils.py", "--file tests/fast/backends/test_fsdp_utils.py: the head cannot run it: "},
	} {
		code, stdout, stderr := runCLI(t, nil, "triage", "--base", "main", "--gpus", c.flag, "--quiet", "--file", c.file)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("triage --gpus %s --file %s: wanted a usage error with %q, got %d\n%s\n%s", c.flag, c.file, c.want, code, stdout, stderr)
		}
		if after, _ := os.ReadDir("."); len(after) != len(before) {
			t.Errorf("triage --gpus %s --file %s: wanted nothing written in the checkout, got %v", c.flag, c.file, after)
		}
	}
}
