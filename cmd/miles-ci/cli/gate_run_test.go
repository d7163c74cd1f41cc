package cli

import (
	"context"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// gateEngine is a fake engine whose CUDA stage run passes every planned
// file and keeps the record text for each, as the run wrapper would.
func gateEngine(t *testing.T, record string) {
	t.Helper()
	old := engineRun
	t.Cleanup(func() { engineRun = old })
	engineRun = func(_ context.Context, req stagerun.Request, _ engine.Inputs, _ string, _ io.Writer, m *report.Masker, _ func(string)) (stagerun.Result, error) {
		s := report.Summary{HW: req.Stage.Backend, Suite: req.Stage.Name, Image: req.Image.Image, Passed: true, Verdict: report.Passed, Cadence: req.Plan.Cadence}
		var recs []report.GateRecord
		for _, f := range req.Plan.Enabled {
			s.Tests = append(s.Tests, report.TestResult{File: f.File, Status: report.Pass, Attempts: 1})
			recs = append(recs, report.GateRecord{File: f.File, Attempt: 1, Record: &record})
		}
		js, err := encode.JSON(s)
		if err != nil {
			t.Fatal(err)
		}
		return stagerun.Result{Summary: s, GateRecords: recs, Files: []stagerun.ResultFile{{Name: stagerun.SummaryFile, Data: m.Mask(string(js))}}}, nil
	}
}

func gateRepo() string { return filepath.Join("..", "..", "..", "testdata", "miles-gate") }

func gateRunArgs(results string, more ...string) []string {
	return append([]string{"run", "--repo", gateRepo(), "--stage", "stage-c-4-gpu-h200", "--shard", "1", "--labels", "run-ci-megatron", "--gpus", "none", "--quiet", "--results", results}, more...)
}

// TestRunJudgesTheGate: a CUDA stage run judges each passing file's record
// (summary.json's gate, the record in gate/, the step summary, report.html)
// and never changes its verdict; a nightly run with --gate-db stores the
// verdicts after its results, and the next run is judged against them.
func TestRunJudgesTheGate(t *testing.T) {
	steady, err := os.ReadFile(filepath.Join(gateRepo(), "records", "steady.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	gateEngine(t, string(steady))
	dir := t.TempDir()
	db := filepath.Join(dir, "gate.db")
	code, stdout, stderr := runCLI(t, map[string]string{"MILES_CI_GATE_DB": db}, gateRunArgs(filepath.Join(dir, "r1"), "--nightly")...)
	if code != 0 || !strings.Contains(stdout, "  gate     tests/e2e/megatron/test_grpo.py: trusted (3 coordinate(s): 3 inactive)") ||
		!strings.Contains(stderr, "stored the metric gate's baseline of 1 file(s) in "+db) {
		t.Fatalf("wanted a trusted cold start stored, got %d\n%s\n%s", code, stdout, stderr)
	}
	sum, err := report.ReadResults(filepath.Join(dir, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if g := sum.Gate; g == nil || !g.WritesBaseline || g.Form != "31f1ca9" || len(g.Files) != 1 || g.Files[0].Record == "" {
		t.Fatalf("wanted summary.json's gate with the file and its record, got %+v", sum.Gate)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "r1", sum.Gate.Files[0].Record)); err != nil || string(got) != string(steady) {
		t.Errorf("wanted the record kept in the results, got %q %v", got, err)
	}

	md := filepath.Join(dir, "step.md")
	code, stdout, _ = runCLI(t, map[string]string{"MILES_CI_GATE_DB": db, "GITHUB_STEP_SUMMARY": md}, gateRunArgs(filepath.Join(dir, "r2"))...)
	page, _ := os.ReadFile(filepath.Join(dir, "r2", "report.html"))
	step, _ := os.ReadFile(md)
	if code != 0 || !strings.Contains(stdout, "trusted (3 coordinate(s): 3 pass)") ||
		!strings.Contains(string(step), "| `tests/e2e/megatron/test_grpo.py` | ✅ trusted | `train/ppo_kl` | 0 | ✅ pass | 0.011 | 0.011 (1) | [-0.009, 0.031] |") ||
		!strings.Contains(string(page), `<h2>Metric gate</h2>`) {
		t.Errorf("wanted the regular run judged against the stored one, in the text, the step summary and the page, got %d\n%s\n%s", code, stdout, step)
	}
}

// TestRunGateNeverChangesTheVerdict: a record that fails to read or a store
// that cannot be reached leaves the run's exit status as it was.
func TestRunGateNeverChangesTheVerdict(t *testing.T) {
	gateEngine(t, "{not json")
	dir := t.TempDir()
	code, stdout, _ := runCLI(t, nil, gateRunArgs(filepath.Join(dir, "r"))...)
	if code != 0 || !strings.Contains(stdout, "no verdict: the metric record cannot be read") {
		t.Errorf("wanted exit 0 and the file without a verdict, got %d\n%s", code, stdout)
	}
}

// TestRunGateKeepsThePasswordOut: the password of --gate-db (from
// $MILES_CI_GATE_DB) is in no output and no results file, even when the
// store cannot be reached; --gate-db naming the store the container's own
// harness writes to (NEON_DATABASE_URL) is refused before the run.
func TestRunGateKeepsThePasswordOut(t *testing.T) {
	gateEngine(t, `{"metric": "train/ppo_kl", "series": [[0, 0.01], [1, 0.01]]}`)
	const secret = "gate-pw-0123456789"
	db := "postgres://ci:" + secret + "@127.0.0.1:1/metrics"
	dir := t.TempDir()
	md := filepath.Join(dir, "step.md")
	code, stdout, stderr := runCLI(t, map[string]string{"MILES_CI_GATE_DB": db, "GITHUB_STEP_SUMMARY": md}, gateRunArgs(filepath.Join(dir, "r"), "--nightly")...)
	if code != 0 || !strings.Contains(stderr, "the metric gate's store") || !strings.Contains(stdout, "no verdict") {
		t.Errorf("wanted the run's exit 0, the unreachable store warned of and no verdict, got %d\n%s\n%s", code, stdout, stderr)
	}
	leaks := []string{}
	if strings.Contains(stdout+stderr, secret) {
		leaks = append(leaks, "the output")
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(path); strings.Contains(string(data), secret) {
				leaks = append(leaks, path)
			}
		}
		return nil
	})
	if len(leaks) > 0 {
		t.Errorf("the store's password is in %v", leaks)
	}
	code, _, stderr = runCLI(t, map[string]string{"MILES_CI_GATE_DB": db, "NEON_DATABASE_URL": db}, gateRunArgs(filepath.Join(dir, "r2"))...)
	if code != 1 || !strings.Contains(stderr, "--gate-db names the store the container's harness writes to") || strings.Contains(stderr, secret) {
		t.Errorf("wanted the container's own store refused as --gate-db, got %d\n%s", code, stderr)
	}
}

// TestCIGate: each CUDA shard's gate verdicts reach the run's step summary
// under the shard's folder, and a baseline-writing shard's verdicts are
// stored in --gate-db after the results.
func TestCIGate(t *testing.T) {
	fakeCIEngine(t, nil)
	fake := ciShardRun
	ciShardRun = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		res, spec, err := fake(ctx, c, req, nonce, m)
		if err == nil && req.Stage.Backend == "cuda" && req.Plan != nil {
			cur := metricgate.Float(0.5)
			res.Summary.Gate = &report.GateSummary{Form: "31f1ca9", Store: "gate.db", WritesBaseline: true, Files: []report.GateFile{{FileVerdict: metricgate.FileVerdict{
				Identity: metricgate.Identity{TestPath: "tests/x/test_a.py", Backend: "cuda", Suite: req.Stage.Name}, Verdict: metricgate.Trusted,
				Coordinates: []metricgate.CoordinateVerdict{{Metric: "train/ppo_kl", StepsKey: `"last"`, ConstraintKey: "{}", Step: big.NewInt(-1), Status: metricgate.StatusInactive, Current: &cur}}}}}}
		}
		return res, spec, err
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "gate.db")
	results := filepath.Join(dir, "results")
	code, stdout, stderr := runCLI(t, map[string]string{"MILES_CI_GATE_DB": db}, "ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--gpus", "none", "--quiet", "--only", "stage-c-4-gpu-h200", "--results", results)
	step, _ := os.ReadFile(filepath.Join(results, "step-summary.md"))
	if code != 0 || !strings.Contains(string(step), "#### `stage-c-4-gpu-h200/1-of-3`") || !strings.Contains(string(step), "| `tests/x/test_a.py` | ✅ trusted | `train/ppo_kl` | -1 | ⚪ inactive | 0.5 | – | – |") ||
		!strings.Contains(stderr, "stored the metric gate's baseline of 3 file(s) in "+db) {
		t.Errorf("wanted each shard's gate in the step summary and stored, got %d\n%s\n%s\n%s", code, stdout, stderr, step)
	}
}
