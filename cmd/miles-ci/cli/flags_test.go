package cli

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRepeatedFlags holds the flag rules every command shares: a list flag
// given twice takes the words of both, and a one-value flag given twice is
// a usage error naming it (argparse would keep the last and say nothing).
func TestRepeatedFlags(t *testing.T) {
	t.Run("lists add up", func(t *testing.T) {
		fs := newFlagSet("ci", "", Env{})
		subst := fs.List("substitute", "FROM=TO", "")
		labels := fs.List("labels", "L", "")
		err := fs.parse([]string{"--substitute", "h100=h200", "--labels", "a", "b", "--substitute=b200=h200", "--labels"})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"h100=h200", "b200=h200"}; !slices.Equal(*subst, want) {
			t.Errorf("wanted --substitute %q, got %q", want, *subst)
		}
		if want := []string{"a", "b"}; !slices.Equal(*labels, want) {
			t.Errorf("wanted --labels %q, got %q", want, *labels)
		}
	})
	for _, args := range [][]string{
		{"--repo", "a", "--repo", "b"},
		{"--repo=a", "--repo", "b"},
		{"--max-parallel", "1", "--max-parallel", "2"},
	} {
		t.Run("twice "+args[0], func(t *testing.T) {
			fs := newFlagSet("ci", "", Env{})
			fs.String("repo", "DIR", "")
			fs.Int("max-parallel", "N", "", 1, 10)
			err := fs.parse(args)
			name := strings.SplitN(strings.TrimPrefix(args[0], "--"), "=", 2)[0]
			if err == nil || !strings.Contains(err.Error(), "--"+name+" is given twice") {
				t.Errorf("wanted an error naming --%s given twice, got %v", name, err)
			}
		})
	}
}

// TestRepeatedListFlags is issue 40's case on a command line: two
// --substitute flags on a host of H200s run the stages of both models (the
// B200 pool's file on the H200s; the first flag used to be dropped without
// a word), and --only and --skip given twice take both stages.
func TestRepeatedListFlags(t *testing.T) {
	state := func(out, job string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == job {
				return strings.Join(f[1:], " ")
			}
		}
		return "(absent)"
	}
	ci := []string{"ci", "--repo", filepath.Join("..", "..", "..", "testdata", "miles-b200pool"), "--event", "pull_request",
		"--pr-labels-json", `["run-ci-megatron"]`, "--gpus", "h200:0-7", "--dry-run"}
	var stdout, errb bytes.Buffer
	code := Run(append(ci, "--only", "stage-c-8-gpu-b200", "--only", "stage-c-8-gpu-h200", "stage-a-cpu",
		"--substitute", "b200=h200", "--substitute", "h100=h200", "--skip", "stage-a-cpu"), Env{Stdout: &stdout, Stderr: &errb, Getenv: func(string) string { return "" }})
	out, stderr := stdout.String(), errb.String()
	if code != 0 {
		t.Fatalf("wanted exit 0, got %d\n%s\n%s", code, out, stderr)
	}
	for job, want := range map[string]string{
		"stage-c-b200/test":          "would-run 8 GPUs (substituted b200=h200)",
		"pr-test/stage-c-8-gpu-h200": "would-run 8 GPUs",
		"pr-test/stage-a-cpu":        "excluded left out by --only/--skip (its dependents see it as passed)",
		"pr-test/stage-b-cpu":        "excluded left out by --only/--skip (its dependents see it as passed)",
	} {
		got := state(out, job)
		if job == "stage-c-b200/test" {
			got = strings.Join(strings.Fields(state(strings.ReplaceAll(out, "(Batch 1 / 8 GPU / tests/e2e/megatron/test_b200_eight.py)", ""), job)), " ")
		}
		if got != want {
			t.Errorf("%s: wanted %q, got %q\n%s", job, want, got, out)
		}
	}
	// --substitute says what each one did.
	for _, want := range []string{"::notice::--substitute b200=h200 runs 1 job of b200 stages on h200 devices\n",
		"::warning::--substitute h100=h200 runs no job: no job of this run needs h100 devices that the host lacks\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("wanted %q on stderr, got\n%s", want, stderr)
		}
	}
	code, _, stderr = runCLI(t, nil, "ci", "--repo", milesRepo(), "--event", "pull_request", "--gpus", "none", "--dry-run", "--gpus", "0-7")
	if code != 2 || !strings.Contains(stderr, "--gpus is given twice") {
		t.Errorf("wanted a usage error naming --gpus given twice (exit 2), got %d\n%s", code, stderr)
	}
}
