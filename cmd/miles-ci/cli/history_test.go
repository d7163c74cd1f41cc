package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/history/historytest"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// TestRunRecords runs a stage with --record on a fake engine: its attempts
// (a retry among them) are written; the same --run-id again writes nothing
// new; the same run id with another outcome fails, writes nothing and
// leaves the exit status the run's; a store that cannot be opened is a
// warning, with the rows kept in the results folder.
func TestRunRecords(t *testing.T) {
	defer func(old func(context.Context, stagerun.Request, engine.Inputs, string, io.Writer, *report.Masker, func(string)) (stagerun.Result, error)) {
		engineRun = old
	}(engineRun)
	second := report.Pass
	engineRun = func(_ context.Context, req stagerun.Request, _ engine.Inputs, _ string, _ io.Writer, _ *report.Masker, _ func(string)) (stagerun.Result, error) {
		exit := 0
		s := report.Summary{HW: req.Stage.Backend, Suite: req.Stage.Name, Passed: true, Verdict: report.Passed, Tests: []report.TestResult{
			{File: "tests/e2e/megatron/test_glm4_9b.py", Status: second, Attempts: 2, ElapsedS: 42, ExitCode: &exit, EstTime: 600,
				Tries: []report.Try{{Status: report.Fail, ElapsedS: 20}, {Status: second, ElapsedS: 22}}}}}
		return stagerun.Result{Summary: s}, nil
	}
	for name, newDB := range historytest.DBs(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			rows := func() int {
				s, err := history.Open(context.Background(), db)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				r, err := s.Rows(context.Background(), time.Time{}, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				return len(r)
			}
			run := func(vars map[string]string, extra ...string) (int, string) {
				args := append([]string{"run", "--stage", "stage-c-4-gpu-h200", "--shard", "1", "--repo", milesRepo(), "--labels", "run-ci-megatron",
					"--gpus", "none", "--quiet", "--record", "--run-id", "77"}, extra...)
				code, _, stderr := runCLI(t, vars, args...)
				return code, stderr
			}
			env := map[string]string{history.EnvDB: db}
			second = report.Pass
			if code, stderr := run(env); code != 0 || rows() != 2 || !strings.Contains(stderr, "recorded the run's attempts") {
				t.Fatalf("wanted exit 0 and 2 rows, got %d, %d rows, %q", code, rows(), stderr)
			}
			if code, _ := run(env); code != 0 || rows() != 2 {
				t.Errorf("wanted the same run id to write nothing new, got %d and %d rows", code, rows())
			}
			second = report.Timeout // the same run, another outcome
			code, stderr := run(env)
			if code != 0 || rows() != 2 || !strings.Contains(stderr, "::warning::runtime history write failed (the run's result stands)") || !strings.Contains(stderr, "different status") {
				t.Errorf("wanted a warning, exit 0 and nothing written, got %d, %d rows, %q", code, rows(), stderr)
			}
		})
	}
	t.Run("a store that fails keeps the rows", func(t *testing.T) {
		second = report.Pass
		dir := t.TempDir()
		results := filepath.Join(dir, "results")
		bad := filepath.Join(dir, "not-a-db")
		os.WriteFile(bad, []byte("not sqlite"), 0o644)
		code, _, stderr := runCLI(t, map[string]string{"MILES_CI_HISTORY_DB": "postgres://ci:hunter2hunter2@127.0.0.1:1/x?connect_timeout=1"}, "run", "--stage", "stage-c-4-gpu-h200", "--shard", "1",
			"--repo", milesRepo(), "--labels", "run-ci-megatron", "--gpus", "none", "--quiet", "--results", results)
		if code != 0 || !strings.Contains(stderr, "runtime history write failed") || strings.Contains(stderr, "hunter2") || !strings.Contains(stderr, "miles-ci history import --results "+results) {
			t.Errorf("wanted exit 0 and a masked warning naming the import, got %d, %q", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(results, history.RowsFile)); err != nil {
			t.Errorf("wanted the rows kept: %v", err)
		}
	})
}

func TestEstTimeCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	code, _, stderr := runCLI(t, nil, "history", "init", "--db", db)
	if code != 0 {
		t.Fatalf("history init: %d %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, nil, "history", "init", "--db", db); code != 1 || !strings.Contains(stderr, "exists already") {
		t.Errorf("wanted a second init refused, got %d %q", code, stderr)
	}
	dirs, _ := filepath.Glob("../../../usecase/runhistory/testdata/esttime/rows/run-*")
	args := append([]string{"history", "import", "--db", db, "--results"}, dirs...)
	if code, _, stderr := runCLI(t, nil, args...); code != 0 {
		t.Fatalf("history import: %d %q", code, stderr)
	}
	code, stdout, stderr := runCLI(t, nil, "est-time", "--repo", "../../../usecase/runhistory/testdata/esttime/tree", "--db", db, "--as-of", "2026-08-12", "--dry-run")
	want, _ := os.ReadFile("../../../usecase/runhistory/testdata/esttime/want/report.md")
	if code != 0 || stdout != string(want) {
		t.Errorf("wanted exit 0 and Miles' report, got %d %q %q", code, stdout, stderr)
	}
	var errb strings.Builder
	Run([]string{"est-time", "--repo", "../../../usecase/runhistory/testdata/esttime/tree", "--db", db, "--as-of", "2026-08-12", "--dry-run"},
		Env{Stdout: io.Discard, Stderr: &errb, Getenv: func(string) string { return "" }})
	if !strings.HasPrefix(errb.String(), "::notice::est-time: found 71 sample(s) of 85 row(s) in the history: ") {
		t.Errorf("wanted what est-time found on stderr, got %q", errb.String())
	}
	if code, _, _ := runCLI(t, nil, "est-time", "--as-of", "2026-13-01", "--db", db); code != 2 {
		t.Errorf("wanted a usage error for a bad date, got %d", code)
	}
	code, stdout, _ = runCLI(t, nil, "history", "flaky", "--db", db)
	if code != 0 || !strings.Contains(stdout, "tests/e2e/a/test_positional.py (CUDA, stage-c-8-gpu-h200): 6 commits with a pass and a fail, 6 passes only on retry; 6 passes, 6 fails") {
		t.Errorf("wanted test_positional as flaky, got %d %q", code, stdout)
	}
	code, stdout, _ = runCLI(t, nil, "history", "shards", "--stage", "stage-c-8-gpu-h100", "--repo", "../../../usecase/runhistory/testdata/esttime/tree", "--db", db, "--as-of", "2026-08-12")
	want2 := "stage-c-8-gpu-h100: job timeout 21600s\n  shard 1/2: est_time 660s, calibrated est_time 670s, observed 261s (2 files)\n  shard 2/2: est_time 640s, calibrated est_time 710s, observed 563s (4 files)\n"
	if code != 0 || stdout != want2 {
		t.Errorf("wanted %q, got %d %q", want2, code, stdout)
	}
	tree := "../../../usecase/runhistory/testdata/esttime/tree"
	code, stdout, stderr = runCLI(t, nil, "history", "slowest", "--repo", tree, "--db", db, "--as-of", "2026-08-12", "--top", "2")
	if code != 0 || strings.Count(stdout, "\n") != 4 || !strings.Contains(stdout, "tests/e2e/b/test_disabled.py ") {
		t.Errorf("history slowest: wanted the 2 slowest, got %d %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, nil, "history", "trend", "tests/e2e/a/test_keyword.py", "--db", db, "--as-of", "2026-08-13")
	if code != 0 || !strings.HasPrefix(stdout, "tests/e2e/a/test_keyword.py: 12 attempt(s) from 2026-05-15 to 2026-08-13\n") {
		t.Errorf("history trend: wanted 12 attempts, got %d %q %q", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, nil, "history", "trend", "--db", db); code != 2 || !strings.Contains(stderr, "give the test file") {
		t.Errorf("history trend without FILE: wanted a usage error, got %d %q", code, stderr)
	}
	svg := filepath.Join(t.TempDir(), "chart.svg")
	code, _, stderr = runCLI(t, nil, "history", "chart", "--repo", tree, "--db", db, "--as-of", "2026-08-12", "--stage", "stage-c-8-gpu-h100", "--out", svg)
	if data, err := os.ReadFile(svg); code != 0 || err != nil || !strings.HasPrefix(string(data), "<svg ") {
		t.Errorf("history chart: wanted an SVG in %s, got %d %q (%v)", svg, code, stderr, err)
	}
}
