package usecase

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/radixark/miles-ci/gitrepo"
	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/triage"
)

// plantedRunner runs the planted files: regression fails only at the head,
// pre-existing everywhere, flaky on odd attempts (its seed is the attempt),
// the rest pass.
type plantedRunner struct {
	base    string
	mu      sync.Mutex
	runs    []string
	commits []stagerun.Commits
	cost    time.Duration
	clock   *fakeClock
}

func (p *plantedRunner) Resolve(_ context.Context, req stagerun.Request, _ string) (stagerun.Request, error) {
	req.Commits = stagerun.Commits{SGLang: strings.Repeat("a", 40), Megatron: strings.Repeat("b", 40)}
	return req, nil
}

func (p *plantedRunner) Run(_ context.Context, repo string, req stagerun.Request, _ string) (stagerun.Result, error) {
	side := "head"
	if repo == p.base {
		side = "base"
	}
	n, _ := strconv.Atoi(req.GitHub.RunAttempt)
	file := req.File.File
	p.mu.Lock()
	p.runs = append(p.runs, side+" "+filepath.Base(file)+" "+req.GitHub.RunAttempt)
	p.commits = append(p.commits, req.Commits)
	p.mu.Unlock()
	if p.clock != nil {
		p.clock.advance(p.cost)
	}
	fail := false
	switch filepath.Base(file) {
	case "test_data_source.py":
		fail = side == "head"
	case "test_arguments.py":
		fail = true
	case "test_chunked_gae.py":
		fail = n%2 == 1
	}
	sum := report.Summary{Verdict: report.Passed, Passed: true, Tests: []report.TestResult{{File: file, Status: report.Pass}}}
	if fail {
		sum = report.Summary{Verdict: report.Failed, Tests: []report.TestResult{{File: file, Status: report.Fail}}}
	}
	return stagerun.Result{Summary: sum, Files: []stagerun.ResultFile{{Name: "run.log", Data: side}}}, nil
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// gitTree is testdata/miles as a git checkout with two commits: the base
// (main) and the head, which adds a line to a README.
func gitTree(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, filepath.Join("..", "testdata", "miles"), dir)
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
	testfiles.Write(t, dir, "CHANGE.md", "the change\n")
	git("add", "-A")
	git("commit", "-q", "-m", "head")
	return dir
}

func TestTriageVerdicts(t *testing.T) {
	repo := gitTree(t)
	baseDir, head, base, err := gitrepo.BaseCheckout(context.Background(), repo, "main", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if head == base || len(base) != 40 {
		t.Fatalf("wanted two commits, got head %s base %s", head, base)
	}
	p := &plantedRunner{base: baseDir}
	files := []string{"tests/fast/test_data_source.py", "tests/fast/test_arguments.py", "tests/fast/test_chunked_gae.py", "tests/fast/test_rollout_buffer.py"}
	ans, err := Triage(context.Background(), TriageRequest{Head: Inputs{Repo: repo, GPUs: "none"}, BaseRepo: baseDir, HeadCommit: head, BaseCommit: base,
		Files: files, Session: "s1", Out: "out", Runner: p})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		verdict triage.Verdict
		counts  string
		runs    int
	}{
		"tests/fast/test_data_source.py":    {triage.Regression, "head 0 pass / 3 fail, base 3 pass / 0 fail", 6},
		"tests/fast/test_arguments.py":      {triage.PreExisting, "head 0 pass / 3 fail, base 0 pass / 1 fail", 4},
		"tests/fast/test_chunked_gae.py":    {triage.Flaky, "head 1 pass / 1 fail", 2},
		"tests/fast/test_rollout_buffer.py": {triage.NotReproduced, "head 3 pass / 0 fail", 3},
	}
	for _, f := range ans.Files {
		w := want[f.File]
		if f.Verdict != w.verdict || f.Counts.String() != w.counts || len(f.Attempts) != w.runs {
			t.Errorf("%s: wanted %s (%s) in %d attempts, got %s (%s) in %d: %s", f.File, w.verdict, w.counts, w.runs, f.Verdict, f.Counts, len(f.Attempts), f.Reason)
		}
		if a := f.Attempts[0]; a.Log != filepath.Join("out", a.Dir, "run.log") || a.Summary == nil {
			t.Errorf("%s: wanted the attempt's run.log path and summary, got %q", f.File, a.Log)
		}
	}
	for _, c := range p.commits {
		if c.SGLang != strings.Repeat("a", 40) {
			t.Errorf("wanted every attempt, head and base, on the refs resolved once, got %+v", c)
		}
	}
	if ans.ExitStatus() != 1 {
		t.Errorf("wanted exit 1 (a regression), got %d", ans.ExitStatus())
	}
}

func TestTriageBudgetAndBase(t *testing.T) {
	repo := gitTree(t)
	baseDir, _, base, err := gitrepo.BaseCheckout(context.Background(), repo, "", t.TempDir())
	if err != nil {
		t.Fatalf("wanted the default branch (main) as the base, got %v", err)
	}
	if _, _, again, _ := gitrepo.BaseCheckout(context.Background(), repo, "main", t.TempDir()); again != base {
		t.Errorf("wanted main's merge base, got %s and %s", base, again)
	}
	if _, _, _, err := gitrepo.BaseCheckout(context.Background(), repo, "--upload-pack=x", t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a git ref") {
		t.Errorf("wanted an option refused as a ref, got %v", err)
	}
	clock := &fakeClock{t: time.Unix(0, 0)}
	p := &plantedRunner{base: baseDir, clock: clock, cost: 4 * time.Minute}
	ans, err := Triage(context.Background(), TriageRequest{Head: Inputs{Repo: repo, GPUs: "none"}, BaseRepo: baseDir, Files: []string{"tests/fast/test_data_source.py"},
		Session: "s2", Runner: p, Budget: 10 * time.Minute, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	f := ans.Files[0]
	if want := "the --budget of 10m0s ran out (so far: head 0 pass / 3 fail)"; f.Verdict != triage.Inconclusive || f.Reason != want {
		t.Errorf("wanted %q, got %s: %q", want, f.Verdict, f.Reason)
	}
	if _, err := Triage(context.Background(), TriageRequest{BaseRepo: baseDir, Files: []string{"x"}, Session: "a b"}); err == nil || !strings.Contains(err.Error(), "session") {
		t.Errorf("wanted the session refused, got %v", err)
	}
}
