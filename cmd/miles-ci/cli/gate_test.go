package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/usecase/gatestore"
)

// gateArgs is `miles-ci gate` on the fixture checkout with one of its records.
func gateArgs(record string, more ...string) []string {
	return append([]string{"gate", "--repo", filepath.Join("..", "..", "..", "testdata", "miles-gate"), "--file", "tests/e2e/megatron/test_grpo.py",
		"--record", filepath.Join("..", "..", "..", "testdata", "miles-gate", "records", record)}, more...)
}

// TestGateCommand: with no store every coordinate is a cold start; a
// nightly run stores its verdict and values in a SQLite store it creates, and
// the next run is judged against them (a drifted record fails, exit 1); a
// regular run stores nothing.
func TestGateCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, gateArgs("steady.jsonl")...)
	if code != 0 || !strings.Contains(stdout, "trusted (3 coordinate(s): 3 inactive)") || stderr != "" {
		t.Fatalf("wanted a trusted cold start, got %d\n%s\n%s", code, stdout, stderr)
	}
	db := filepath.Join(t.TempDir(), "metric_history.db")
	for i := 0; i < 2; i++ {
		code, stdout, stderr = runCLI(t, map[string]string{"MILES_CI_GATE_DB": db, "GITHUB_SHA": "abc"}, gateArgs("steady.jsonl", "--nightly")...)
		if code != 0 || !strings.Contains(stdout, "baseline: stored the run (trusted, 3 value(s)) in "+db) {
			t.Fatalf("wanted the nightly run stored, got %d\n%s\n%s", code, stdout, stderr)
		}
	}
	code, stdout, _ = runCLI(t, map[string]string{"MILES_CI_GATE_DB": db}, gateArgs("steady.jsonl")...)
	want := "tests/e2e/megatron/test_grpo.py (cuda, stage-c-4-gpu-h200; gate form 31f1ca9): trusted (3 coordinate(s): 3 pass)\n" +
		"  pass      train/ppo_kl step 0: 0.011 vs mean 0.011 of 2, band [-0.009, 0.031]\n" +
		"  pass      train/ppo_kl step 1: 0.013 vs mean 0.013 of 2, band [-0.007, 0.033]\n" +
		"  pass      perf/tokens_per_s last (step 1): 1204.5 vs mean 1204.5 of 2, band [1084.05, 1e+09]\n" +
		"baseline: not written (a shadow verdict: only nightly and weekly runs write it)\n"
	if code != 0 || stdout != want {
		t.Errorf("wanted the run judged against the two stored ones:\n%s\ngot %d:\n%s", want, code, stdout)
	}
	code, stdout, _ = runCLI(t, map[string]string{"MILES_CI_GATE_DB": db}, gateArgs("missing.jsonl", "--json")...)
	if code != 1 || !strings.Contains(stdout, `"verdict": "not-trusted"`) || !strings.Contains(stdout, `"reason": "required metric 'perf/tokens_per_s' missing from record"`) {
		t.Errorf("wanted a not-trusted verdict as JSON, exit 1, got %d\n%s", code, stdout)
	}
}

// TestGateRefuses: a missing record, a mistyped backend and a checkout
// without the gate are errors that name the input.
func TestGateRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{gateArgs("none.jsonl"), 1, "--record: "},
		{gateArgs("steady.jsonl", "--backend", "tpu"), 2, "--backend"},
		{gateArgs("steady.jsonl", "--cadence", "nightly", "--nightly"), 2, "--nightly is not allowed with --cadence"},
		{[]string{"gate", "--repo", filepath.Join("..", "..", "..", "testdata", "miles"), "--file", "tests/e2e/test_gpu.py", "--record", filepath.Join("..", "..", "..", "testdata", "miles-gate", "records", "steady.jsonl")}, 1, "no metric-history gate"},
	} {
		code, _, stderr := runCLI(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: wanted exit %d naming %q, got %d\n%s", tc.args, tc.code, tc.err, code, stderr)
		}
	}
}

// TestGateKeepsThePasswordOut: a store URL's password, from the
// environment (NEON_DATABASE_URL, as Miles' harness reads it) or --db, is in
// no output, even when the store cannot be reached; on the command line it
// is also warned of.
func TestGateKeepsThePasswordOut(t *testing.T) {
	const secret = "s3cret-neon-pw"
	db := "postgres://ci:" + secret + "@127.0.0.1:1/metrics"
	code, stdout, stderr := runCLI(t, map[string]string{"NEON_DATABASE_URL": db}, gateArgs("steady.jsonl")...)
	if code != 1 || strings.Contains(stdout+stderr, secret) || !strings.Contains(stderr, "127.0.0.1") {
		t.Errorf("wanted the unreachable store named without its password, got %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, nil, gateArgs("steady.jsonl", "--db", db)...)
	if code != 1 || strings.Contains(stdout+stderr, secret) || !strings.Contains(stderr, "--db holds a password") {
		t.Errorf("wanted the password warned of and never shown, got %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestGateTextKeepsACoordinateOnOneLine: a metric key is the test file's
// own text; a line break in it stays in its coordinate's line.
func TestGateTextKeepsACoordinateOnOneLine(t *testing.T) {
	var ans gatestore.Answer
	ans.Verdict.Coordinates = []metricgate.CoordinateVerdict{{Metric: "a\n::error::forged\x1b[2J", Status: metricgate.StatusError, Reason: "r"}}
	got := gateText(ans)
	if want := "  error     a\\n::error::forged\\x1b[2J: r\n"; !strings.Contains(got, want) {
		t.Errorf("wanted %q in\n%s", want, got)
	}
}
