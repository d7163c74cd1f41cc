package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
