package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/history/historytest"
	"github.com/radixark/miles-ci/internal/resultsdir"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// hostile is text a test can print: GitHub workflow commands, old and new.
const hostile = "\n::error title=pwned::owned\n##[error]owned\n::set-output name=x::y\n  ::add-mask::z"

// noCommands fails when a line of out is a workflow command miles-ci did
// not make (its own annotations open with ::error::, ::warning:: or
// ::notice::) or holds the older ##[ form.
func noCommands(t *testing.T, name, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		trimmed := strings.TrimLeft(l, " \t")
		own := strings.HasPrefix(l, "::error::") || strings.HasPrefix(l, "::warning::") || strings.HasPrefix(l, "::notice::")
		if strings.HasPrefix(trimmed, "::") && !own || strings.Contains(l, "##[") {
			t.Errorf("%s: a workflow command reached it: %q", name, l)
		}
	}
}

// TestCITestTextIsPlain: what a test prints reaches ci's stdout (a not-run
// reason) and stderr (a state line) as text, never as a workflow command
// (issue 31: run neutralised it, ci did not).
func TestCITestTextIsPlain(t *testing.T) {
	fakeCIEngine(t, nil)
	ciShardRun = func(context.Context, stagerun.Container, stagerun.Request, string, *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		return stagerun.Result{}, stagerun.Spec{}, fmt.Errorf("%w: the run wrapper was killed:%s", stagerun.ErrCannotRun, hostile)
	}
	code, stdout, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--gpus", "none", "--quiet", "--only", "stage-a-cpu")
	if code != report.ExitCannotRun || !strings.Contains(stdout, "the run wrapper was killed") {
		t.Fatalf("wanted exit 125 and the reason shown, got %d\n%s\n%s", code, stdout, stderr)
	}
	noCommands(t, "stdout", stdout)
	noCommands(t, "stderr", stderr)
}

// TestHistoryFlakyPathsArePlain: a test path from the store is printed as
// text (issue 31: history flaky printed ::error lines from a hostile path).
func TestHistoryFlakyPathsArePlain(t *testing.T) {
	db := historytest.DBs(t)["sqlite"](t)
	s, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	path := "::error title=x::pwned ##[error]y.py"
	for i, st := range []string{history.Pass, history.Fail} {
		b := history.Batch{Provenance: history.Provenance{CommitSHA: "c", RunID: int64(i + 1), RunAttempt: 1, Event: "schedule", Ref: "refs/heads/main"},
			Attempts: []history.Attempt{{TestPath: path, Backend: "CUDA", Suite: "s", TestAttempt: 1, Status: st, ElapsedS: 1, EstimatedS: 1}}, RecordedAt: time.Now()}
		if err := s.Write(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	code, stdout, stderr := runCLI(t, nil, "history", "flaky", "--db", db)
	if code != 0 || !strings.Contains(stdout, "pwned") {
		t.Fatalf("wanted the flaky path shown, got %d\n%s\n%s", code, stdout, stderr)
	}
	noCommands(t, "stdout", stdout)
}

// ciRecordArgs runs the CPU stages, recording in db, into results.
func ciRecordArgs(results, db string) []string {
	return []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--gpus", "none", "--quiet", "--only", "cpu", "--results", results, "--record", "--db", db}
}

// withEstTime gives the fake engine's files an est_time, so they record.
func withEstTime(t *testing.T) {
	passed := ciShardRun
	ciShardRun = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		res, spec, err := passed(ctx, c, req, nonce, m)
		res.Summary.Tests[0] = report.TestResult{File: "tests/fast/test_" + req.Stage.Name + ".py", Status: report.Pass, Attempts: 1, ElapsedS: 3, EstTime: 5,
			Tries: []report.Try{{Status: report.Pass, ElapsedS: 3}}}
		if req.Plan != nil && req.Plan.Partition != nil {
			res.Summary.Tests[0].File = fmt.Sprintf("tests/fast/test_%s_%d.py", req.Stage.Name, req.Plan.Partition.ID)
		}
		return res, spec, err
	}
}

// TestCIFullDiskKeepsTheVerdict: a full disk while the results folder is
// written leaves the graph and its verdict printed, the exit status the
// verdict's, the earlier folder as it was, the history recorded without
// the folder, and an error that says so (issue 31: exit 125, nothing on
// stdout, no history).
func TestCIFullDiskKeepsTheVerdict(t *testing.T) {
	fakeCIEngine(t, nil)
	withEstTime(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	results := filepath.Join(dir, "results")
	if code, _, stderr := runCLI(t, nil, ciRecordArgs(results, db)...); code != 0 {
		t.Fatalf("the first run: %d\n%s", code, stderr)
	}
	sentinel := filepath.Join(results, "earlier")
	os.WriteFile(sentinel, []byte("the first run's"), 0o644)
	old := writeResultFile
	t.Cleanup(func() { writeResultFile = old })
	n := 0
	writeResultFile = func(path string, data []byte, perm fs.FileMode) error {
		if n++; n == 3 {
			return &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return old(path, data, perm)
	}
	code, stdout, stderr := runCLI(t, nil, ciRecordArgs(results, db)...)
	if code != 0 || !strings.Contains(stdout, "dependency layers:") || strings.Contains(stdout, "results: ") {
		t.Errorf("wanted exit 0 (the verdict's) and the graph printed, got %d\n%s", code, stdout)
	}
	for _, want := range []string{"no space left on device", results + " is left as it was and this run's results are not kept",
		"the verdict above stands (exit 0)", "the runtime history is recorded without it", "miles-ci: recorded the attempts of 5 shard(s)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("wanted %q on stderr, got\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(sentinel); err != nil {
		t.Errorf("wanted the earlier results kept: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".results.new-*")); len(left) != 0 {
		t.Errorf("wanted no half-written folder left, got %v", left)
	}
}

// TestResultsFolderIsLocked: a results folder a run writes is locked
// against a second run (issue 31: the second silently replaced it).
func TestResultsFolderIsLocked(t *testing.T) {
	fakeCIEngine(t, nil)
	results := filepath.Join(t.TempDir(), "results")
	unlock, err := resultsdir.Lock(results)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--gpus", "none", "--quiet", "--only", "stage-a-cpu", "--results", results}
	code, _, stderr := runCLI(t, nil, args...)
	if code != 1 || !strings.Contains(stderr, "--results "+results+" is being written by another miles-ci run") {
		t.Errorf("wanted the second run refused, got %d\n%s", code, stderr)
	}
	unlock()
	if code, _, stderr := runCLI(t, nil, args...); code != 0 {
		t.Errorf("wanted a run once the lock is free, got %d\n%s", code, stderr)
	}
}

// TestHistoryApartFromResults: a SQLite history inside the results folder
// (which the next run deletes) is refused before the run.
func TestHistoryApartFromResults(t *testing.T) {
	fakeCIEngine(t, nil)
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	for _, db := range []string{filepath.Join(results, "h.db"), results} {
		code, _, stderr := runCLI(t, nil, ciRecordArgs(results, db)...)
		if code != 1 || !strings.Contains(stderr, "--results "+results) {
			t.Errorf("--db %s: wanted it refused, got %d\n%s", db, code, stderr)
		}
	}
	if _, err := os.Stat(results); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("wanted nothing run, got %v", err)
	}
}

// TestReportChecksTheFolder: report --results says when a ci folder fails
// the one reader's checks, and its verdict is then no pass (issue 38 items
// 1, 2: a forged summary.json exited 0; a failed shard set to passed in
// the record only showed passed).
func TestReportChecksTheFolder(t *testing.T) {
	fakeCIEngine(t, map[string]bool{"stage-a-cpu/1": true})
	results := filepath.Join(t.TempDir(), "results")
	args := []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--gpus", "none", "--quiet", "--only", "stage-a-cpu", "--head-sha", "abc", "--results", results}
	if code, _, stderr := runCLI(t, nil, args...); code != 1 {
		t.Fatalf("the run: wanted exit 1, got %d\n%s", code, stderr)
	}
	if code, stdout, _ := runCLI(t, nil, "report", "--results", results); code != 1 || strings.Contains(stdout, "not proven") {
		t.Fatalf("wanted the folder as written to read as it is (exit 1), got %d\n%s", code, stdout)
	}
	passAll := func(j map[string]any) {
		if j["state"] == "failed" {
			j["state"], j["result"], j["exit_code"] = "passed", "success", 0.0
		}
	}
	editSummary(t, results, func(s map[string]any) {
		for _, j := range s["jobs"].([]any) {
			passAll(j.(map[string]any))
		}
	})
	code, stdout, stderr := runCLI(t, nil, "report", "--results", results)
	if code != 1 || !strings.Contains(stdout, "not proven: pr-test/stage-a-cpu shard 2/4 passed in attempt 1, but its folder does not prove it: its summary.json says failed where the run record says passed") {
		t.Errorf("wanted the shard named and exit 1, got %d\n%s\n%s", code, stdout, stderr)
	}
	// Only the record left: refused.
	for _, d := range []string{"stage-a-cpu"} {
		os.RemoveAll(filepath.Join(results, d))
	}
	code, _, stderr = runCLI(t, nil, "report", "--results", results)
	if code != 1 || !strings.Contains(stderr, "not a results folder miles-ci wrote") || !strings.Contains(stderr, "holds none of their records") {
		t.Errorf("wanted the forged folder refused, got %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, nil, append(args[:len(args)-2], "--rerun-failed", results)...)
	if code != 2 || !strings.Contains(stderr, "holds none of their records") {
		t.Errorf("wanted --rerun-failed of the forged folder refused (exit 2), got %d\n%s", code, stderr)
	}
}
