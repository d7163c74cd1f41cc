package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// runRaw runs the command as runCLI does, with its notices kept.
func runRaw(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}

// TestFirstHourSmallItems holds issue 40's smaller items, each as a new
// user meets it.
func TestFirstHourSmallItems(t *testing.T) {
	t.Run("help lists every history verb", func(t *testing.T) {
		_, out, _ := runRaw(t, "--help")
		if !strings.Contains(out, "the runtime history: init, import, flaky, shards, slowest, trend, chart, predictions (") {
			t.Errorf("wanted history's summary to list its eight verbs, got\n%s", out)
		}
	})
	t.Run("a mistyped history verb", func(t *testing.T) {
		if code, _, stderr := runRaw(t, "history", "prediction"); code != 2 || !strings.Contains(stderr, "did you mean predictions?") {
			t.Errorf("wanted a did you mean for predictions, got %d\n%s", code, stderr)
		}
		code, _, stderr := runRaw(t, "history", "slowst")
		if want := `miles-ci history: "slowst" is not a subcommand of history; did you mean slowest?`; code != 2 || !strings.HasPrefix(stderr, want+"\n") {
			t.Errorf("wanted exit 2 and %q, got %d\n%s", want, code, stderr)
		}
	})
	t.Run("a mistyped command", func(t *testing.T) {
		code, _, stderr := runRaw(t, "plna")
		if want := "miles-ci: unknown command \"plna\"; did you mean plan? run 'miles-ci help' for the list\n"; code != 2 || stderr != want {
			t.Errorf("wanted exit 2 and %q, got %d %q", want, code, stderr)
		}
	})
	t.Run("explain names an external nightly stage", func(t *testing.T) {
		_, out, _ := runRaw(t, "explain", "--repo", milesRepo(), "--file", "tests/e2e/ft/test_ft_amd.py")
		want := "    stage: nightly-stage-c-8-gpu-mi350 (rocm, external nightly only: no job of the checkout's workflows runs it)\n"
		if !strings.Contains(out, want) || strings.Contains(out, "runs on )") {
			t.Errorf("wanted %q, got\n%s", want, out)
		}
	})
	t.Run("policy without a usable diff", func(t *testing.T) {
		// skipped_stages=[] (no stage is skipped) beside "runnable: (none)"
		// said two things: the runnable stages are not worked out there.
		args := []string{"policy", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`}
		_, out, _ := runRaw(t, args...)
		if want := "  runnable: (not worked out: without a usable diff no GPU stage is skipped)\n"; !strings.Contains(out, want) {
			t.Errorf("wanted %q, got\n%s", want, out)
		}
		_, out, _ = runRaw(t, append(args, "--json")...)
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if _, ok := got["runnable"]; ok {
			t.Errorf("wanted no runnable in the JSON where it was not worked out, got\n%s", out)
		}
		// With a usable diff it is worked out, and "(none)" means none.
		_, out, _ = runRaw(t, "policy", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `[]`,
			"--changed-files", filepath.Join(milesRepo(), "diffs", "cpu_only.z"))
		if !strings.Contains(out, "  runnable: (none)\n") {
			t.Errorf("wanted runnable (none) with a usable diff and no label, got\n%s", out)
		}
	})
	t.Run("stages reads the current folder", func(t *testing.T) {
		t.Chdir(milesRepo())
		_, out, stderr := runRaw(t, "stages")
		if !strings.Contains(out, ".github/workflows/pr-test.yml:") || strings.Contains(out, "built-in") {
			t.Errorf("wanted the roster of the current folder's workflows, got\n%s\n%s", out, stderr)
		}
		t.Chdir(t.TempDir())
		_, out, stderr = runRaw(t, "stages")
		if !strings.Contains(out, "built-in") || !strings.Contains(stderr, "has no tests/ folder: not a Miles checkout; showing the built-in roster of rules §1") {
			t.Errorf("wanted the built-in roster, with a notice, outside a checkout; got\n%s\n%s", out, stderr)
		}
	})
}
