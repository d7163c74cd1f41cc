package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history"
)

// TestCIWhatIf: ci --what-if predicts the run with no engine (the engine
// would fail the test), from an empty history: text, JSON, and a results
// folder with the prediction's page.
func TestCIWhatIf(t *testing.T) {
	old := ciConnect
	ciConnect = nil // any call to the engine panics
	t.Cleanup(func() { ciConnect = old })
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	s, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	args := []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--gpus", "h200:0-7", "--what-if", "--db", db}
	var out, errb strings.Builder
	code := Run(args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	stdout, stderr := out.String(), errb.String()
	if code != 125 {
		t.Fatalf("wanted exit 125 (the MI350 shards cannot run on an H200 host), got %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"what-if: pull_request on radixark/miles (--gpus h200:0-7)\n", "pr-test/stage-c-8-gpu-h200 shard 2/2",
		"8 h200 GPUs [0,1,2,3,4,5,6,7]", "cannot run on this fleet:\n", "\n  pr-test-rocm/stage-c-4-gpu-mi350 shard 1/2: needs 4 MI350 GPUs; this host has 8 H200",
		"\nspan ", "binds): ", "GPU-hours on this host, 8 H200: ", "durations: no file has runtime history"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("wanted %q in the prediction, got\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "::notice::what-if: runtime history: found 0 sample(s)") {
		t.Errorf("wanted what the history read found on stderr, got\n%s", stderr)
	}
	results := filepath.Join(dir, "prediction")
	code, stdout, stderr = runCLI(t, nil, append(args, "--json", "--results", results)...)
	var p struct {
		Shards []struct {
			Job         string  `json:"job"`
			Start       float64 `json:"start_s"`
			End         float64 `json:"end_s"`
			Seconds     float64 `json:"seconds"`
			FromEstTime int     `json:"files_from_est_time"`
		} `json:"shards"`
		Timeline struct {
			Span       float64 `json:"span_s"`
			LowerBound float64 `json:"lower_bound_s"`
			Binds      string  `json:"binds"`
		} `json:"timeline"`
		CannotRun []struct{ Job, Reason string } `json:"cannot_run"`
	}
	if err := json.Unmarshal([]byte(stdout), &p); err != nil || code != 125 || len(p.Shards) == 0 || p.Shards[0].End <= p.Shards[0].Start || len(p.CannotRun) < 2 || p.Timeline.Binds == "" || p.Timeline.LowerBound > p.Timeline.Span {
		t.Fatalf("wanted the prediction as JSON, got %d %v\n%s\n%s", code, err, stdout, stderr)
	}
	page, err := os.ReadFile(filepath.Join(results, "report.html"))
	if err != nil || !strings.Contains(string(page), `<svg id="timeline"`) || !strings.Contains(string(page), "a prediction: some jobs cannot run on this fleet") {
		t.Errorf("wanted the prediction's page with its timeline: %v", err)
	}
	if js, err := os.ReadFile(filepath.Join(results, "what-if.json")); err != nil || string(js) != stdout {
		t.Errorf("wanted what-if.json to be the JSON printed: %v", err)
	}
}

func TestCIWhatIfUsage(t *testing.T) {
	for _, args := range [][]string{{"--dry-run"}, {"--mermaid"}, {"--record"}, {"--rerun-failed", "x"}} {
		code, _, stderr := runCLI(t, nil, append([]string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--gpus", "none", "--what-if"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "--what-if predicts a run and runs nothing") {
			t.Errorf("%v: wanted a usage error, got %d %q", args, code, stderr)
		}
	}
}

// TestCIRecordsItsShardsAndPrediction: ci --record keeps, beside each
// shard's attempts, its start, wall and test seconds and what the run
// predicted for it before it started; history predictions shows the run's
// span against its prediction, and its shards with --run; the next
// what-if learns the set-ups.
func TestCIRecordsItsShardsAndPrediction(t *testing.T) {
	fakeCIEngine(t, nil)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	args := []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--gpus", "none:0-7", "--quiet",
		"--only", "cpu", "stage-c-4-gpu-h200", "--results", filepath.Join(dir, "results"), "--record", "--db", db}
	code, stdout, stderr := runCLI(t, nil, args...)
	if code != 0 || !strings.Contains(stdout, "\ntimeline: span ") {
		t.Fatalf("wanted exit 0 and the timeline, got %d\n%s\n%s", code, stdout, stderr)
	}
	s, err := history.OpenRead(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	shards, err := s.Shards(context.Background(), time.Time{}, time.Time{})
	s.Close()
	if err != nil || len(shards) != 8 {
		t.Fatalf("wanted the 8 shards' runs (5 CPU, 3 GPU), got %d (%v)", len(shards), err)
	}
	var sum struct {
		Run struct {
			RunID string `json:"run_id"`
		} `json:"run"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "results", "summary.json"))
	if err := json.Unmarshal(data, &sum); err != nil || sum.Run.RunID == "" {
		t.Fatalf("summary.json: no run id (%v)", err)
	}
	for _, r := range shards {
		if r.PredictedS == nil || r.PredictedStartS == nil || r.RunID != history.LocalRunID(sum.Run.RunID) || r.Event != history.LocalEvent {
			t.Errorf("%s: wanted its prediction and the run's provenance, got %+v", r.Job, r)
		}
		if r.GPUs == 4 && (r.Devices == "" || r.Stage != "stage-c-4-gpu-h200") {
			t.Errorf("%s: wanted its devices, got %+v", r.Job, r)
		}
	}
	code, stdout, stderr = runCLI(t, nil, "history", "predictions", "--db", db)
	if code != 0 || !strings.Contains(stdout, "8 shard(s), span ") || !strings.Contains(stdout, ", predicted ") {
		t.Errorf("wanted the run's span against its prediction, got %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, nil, "history", "predictions", "--db", db, "--run", sum.Run.RunID)
	if code != 0 || !strings.Contains(stdout, "pr-test/stage-c-4-gpu-h200 shard 2/3") || !strings.Contains(stdout, "; predicted ") {
		t.Errorf("wanted the run's shards, each with its prediction, got %d\n%s", code, stdout)
	}
	if code, _, stderr := runCLI(t, nil, "history", "predictions", "--db", db, "--run", "43"); code != 1 || !strings.Contains(stderr, "no recorded shard of run 43") {
		t.Errorf("wanted an unknown run named, got %d %q", code, stderr)
	}
	// The next what-if, with the local runs, takes the recorded set-ups.
	var out, errb strings.Builder
	code = Run([]string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--gpus", "none:0-7",
		"--only", "cpu", "stage-c-4-gpu-h200", "--what-if", "--db", db, "--events", "schedule", "local"}, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != 0 || !strings.Contains(out.String(), "8 recorded shard run(s) give set-ups for 3 stage(s)") || !strings.Contains(errb.String(), "8 recorded shard run(s) of those events give set-ups") {
		t.Errorf("wanted the what-if to learn the set-ups, got %d\n%s\n%s", code, out.String(), errb.String())
	}
}

func TestCIHistoryFlagsNeedAHistoryRead(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--gpus", "none", "--dry-run", "--events", "schedule", "local")
	if code != 2 || !strings.Contains(stderr, "a dry run reads none") {
		t.Errorf("wanted --events refused with --dry-run, got %d %q", code, stderr)
	}
}
