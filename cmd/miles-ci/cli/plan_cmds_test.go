package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy"
)

func milesRepo() string { return filepath.Join("..", "..", "..", "testdata", "miles") }

func TestPlanFlags(t *testing.T) {
	repo := milesRepo()
	plan := func(args ...string) []string {
		return append([]string{"plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-a-cpu"}, args...)
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string // the first line of stderr
	}{
		{"labels take many words and stop at the next flag", []string{"plan", "--repo", repo, "--hw", "cuda", "--suite", "stage-c-2-gpu-h200", "--labels", "run-ci-megatron", "run-ci-fsdp", "--cadence", "regular"}, 0, ""},
		{"labels take zero words", plan("--labels"), 0, ""},
		{"the workflows' --list-only is accepted", plan("--list-only", "--cadence", "nightly"), 0, ""},
		{"the ROCm stage's retry flags are accepted", []string{"plan", "--repo", repo, "--hw", "rocm", "--suite", "stage-c-4-gpu-mi350", "--enable-retry", "--max-attempts", "2", "--list-only"}, 0, ""},
		{"partition id without size", plan("--auto-partition-id", "0"), 2,
			"miles-ci plan: --auto-partition-id and --auto-partition-size must be specified together."},
		{"partition id out of range", plan("--auto-partition-id", "4", "--auto-partition-size", "4"), 2,
			"miles-ci plan: --auto-partition-id must be in range [0, 4), but got 4"},
		{"partition size above the range", plan("--auto-partition-id", "0", "--auto-partition-size", "2000000000"), 2,
			"miles-ci plan: --auto-partition-size must be in 1..256, got 2000000000"},
		{"partition size zero", plan("--auto-partition-id", "0", "--auto-partition-size", "0"), 2,
			"miles-ci plan: --auto-partition-size must be in 1..256, got 0"},
		{"partition id negative", plan("--auto-partition-id", "-1", "--auto-partition-size", "2"), 2,
			"miles-ci plan: --auto-partition-id must be in 0..255, got -1"},
		{"partition size not a number", plan("--auto-partition-id", "0", "--auto-partition-size", "1e8"), 2,
			`miles-ci plan: --auto-partition-size needs an integer in 1..256, got "1e8"`},
		{"max attempts out of range", plan("--max-attempts", "0"), 2, "miles-ci plan: --max-attempts must be in 1..10, got 0"},
		{"unknown suite", []string{"plan", "--repo", repo, "--hw", "rocm", "--suite", "stage-a-cpu"}, 1,
			"::error::Unknown suite stage-a-cpu for backend ROCM; the rocm suites are stage-c-4-gpu-mi350, nightly-stage-c-8-gpu-mi350, nightly-stage-c-4-gpu-mi350, nightly-stage-c-2-gpu-mi350"},
		{"unknown cadence", plan("--cadence", "hourly"), 2,
			`miles-ci plan: --cadence "hourly" is not one of regular, nightly, weekly, release`},
		{"cadence and nightly exclude each other", plan("--cadence", "weekly", "--nightly"), 2,
			"miles-ci plan: --nightly is not allowed with --cadence; give one"},
		{"nightly label needs nightly cadence", plan("--labels", "nightly"), 1,
			"::error::The nightly workflow label requires cadence='nightly' (got 'regular'); drop the nightly label or pass --cadence nightly"},
		{"unknown flag", []string{"plan", "--repo", repo, "--hardware", "cpu"}, 2, "miles-ci plan: unknown flag --hardware"},
		{"missing hw", []string{"plan", "--repo", repo, "--suite", "stage-a-cpu"}, 2, "miles-ci plan: --hw and --suite are required (or --all)"},
		{"bad hw", []string{"plan", "--repo", repo, "--hw", "tpu", "--suite", "stage-a-cpu"}, 2, `miles-ci plan: --hw "tpu" is not one of cpu, cuda, rocm`},
		{"label without prefix warns", []string{"plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-b-cpu", "--labels", "megatron"}, 0,
			"::warning::--labels entry 'megatron' is missing the expected 'run-ci-' prefix; ignoring. Domain labels must be raw `run-ci-<X>` strings."},
		{"missing repo", []string{"plan", "--repo", "/nonexistent/miles", "--hw", "cpu", "--suite", "stage-a-cpu"}, 1,
			"::error::/nonexistent/miles does not exist: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it"},
		{"repo is a file", []string{"plan", "--repo", filepath.Join(repo, "README.md"), "--hw", "cpu", "--suite", "stage-a-cpu"}, 1,
			"::error::" + filepath.Join(repo, "README.md") + " is not a folder: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it"},
		{"repo without tests", []string{"plan", "--repo", filepath.Join(repo, "scripts"), "--all"}, 1,
			"::error::" + filepath.Join(repo, "scripts") + " has no tests/ folder: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkExitAndFirstLine(t, tc.args, tc.wantCode, tc.wantStderr) })
	}
}

// checkExitAndFirstLine runs args and checks the exit code and the first
// line of stderr (the error; a usage error's synopsis follows it).
func checkExitAndFirstLine(t *testing.T, args []string, wantCode int, wantStderr string) {
	t.Helper()
	code, _, stderr := runArgs(args)
	if code != wantCode {
		t.Fatalf("wanted exit %d, got %d (stderr %q)", wantCode, code, stderr)
	}
	if first, _, _ := strings.Cut(stderr, "\n"); first != wantStderr {
		t.Errorf("wanted stderr %q, got %q", wantStderr, stderr)
	}
}

// TestWrongCheckoutFailsClosed runs every subcommand that reads a checkout
// from a folder that is not one, given or by default: each must fail with
// the same message instead of answering from an empty registry.
func TestWrongCheckoutFailsClosed(t *testing.T) {
	notMiles := t.TempDir()
	diff := filepath.Join(notMiles, "diff.z")
	if err := os.WriteFile(diff, []byte("M\x00megatron/x.py\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "::error::" + notMiles + " has no tests/ folder: not a Miles checkout; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it\n"
	commands := [][]string{
		{"plan", "--hw", "cpu", "--suite", "stage-a-cpu"},
		{"plan", "--all"},
		{"policy", "--event", "pull_request", "--pr-labels-json", "[]", "--changed-files", diff},
		{"explain", "--file", "tests/fast/test_a.py"},
		{"deps", "--backend", "cuda"},
		{"file-plan", "--file", "tests/fast/test_a.py"},
	}
	for _, args := range commands {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runArgs(append(args, "--repo", notMiles))
			if code != 1 || stdout != "" || stderr != want {
				t.Errorf("--repo: wanted exit 1, no stdout and %q, got %d, %q and %q", want, code, stdout, stderr)
			}
			t.Chdir(notMiles)
			wantHere := strings.Replace(want, notMiles, "the current folder ("+notMiles+")", 1)
			for _, repo := range [][]string{nil, {"--repo", ""}} {
				code, stdout, stderr = runArgs(append(append([]string(nil), args...), repo...))
				if code != 1 || stdout != "" || stderr != wantHere {
					t.Errorf("%v: wanted exit 1, no stdout and %q, got %d, %q and %q", repo, wantHere, code, stdout, stderr)
				}
			}
		})
	}
}

// shardPlan is what the plan --all tests read of each plan.
type shardPlan struct {
	Suite     string `json:"suite"`
	Partition *struct{ ID, Size int }
}

// planAllJSON runs plan --all --json with args and decodes its plans.
func planAllJSON(t *testing.T, args ...string) []shardPlan {
	t.Helper()
	code, out, stderr := runArgs(append([]string{"plan", "--all", "--json"}, args...))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var plans []shardPlan
	if err := json.Unmarshal([]byte(out), &plans); err != nil {
		t.Fatal(err)
	}
	return plans
}

func TestPlanAll(t *testing.T) {
	plans := planAllJSON(t, "--repo", milesRepo(), "--cadence", "weekly")
	// 4+1+1+2+3+2+2+2 shards of Miles' own stages and 3 external suites.
	if len(plans) != 20 {
		t.Errorf("wanted 20 plans, got %d", len(plans))
	}
	if plans[0].Suite != "stage-a-cpu" || plans[0].Partition == nil || plans[0].Partition.Size != 4 {
		t.Errorf("wanted stage-a-cpu shard 1/4 first, got %+v", plans[0])
	}
}

func TestPolicyOutputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "github_output")
	diff := filepath.Join(dir, "diff.z")
	if err := os.WriteFile(diff, []byte("M\x00docs/a.md\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte("earlier=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"EVENT_NAME": "pull_request", "PR_LABELS_JSON": `["bypass-fastfail","run-ci-megatron","wontfix"]`,
		"CHANGED_FILES_PATH": diff, "GITHUB_OUTPUT": out,
	}
	code, stdout, stderr := runCLI(t, vars, "policy", "--repo", milesRepo(), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 5 || lines[0] != "earlier=1" || lines[1] != "cadence=regular" || lines[2] != "raw_labels=bypass-fastfail run-ci-megatron" ||
		lines[3] != "bypass_fastfail=true" || !strings.HasPrefix(lines[4], "skipped_stages=[\"") {
		t.Errorf("wanted the four outputs appended, got %q", got)
	}
	var res policy.Outputs
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if "skipped_stages="+compactJSON(res.SkippedStages) != lines[4] {
		t.Errorf("JSON %v and output %q disagree", res.SkippedStages, lines[4])
	}

	code, _, stderr = runCLI(t, map[string]string{"EVENT_NAME": "push"}, "policy", "--repo", milesRepo())
	if code != 1 || !strings.HasPrefix(stderr, "::error::Unsupported PR Test trigger: push") {
		t.Errorf("wanted ::error:: and exit 1, got %d %q", code, stderr)
	}
	code, stdout, _ = runCLI(t, map[string]string{"EVENT_NAME": "push"}, "policy", "--repo", milesRepo(), "--event", "schedule", "--schedule", "0 15 * * 6")
	if code != 0 || stdout != "Resolved CI policy: cadence=weekly labels=[] bypass_fastfail=true skipped_stages=[]\n" {
		t.Errorf("a flag must win over its env var, got %d %q", code, stdout)
	}
}

func TestExplain(t *testing.T) {
	code, out, stderr := runArgs([]string{"explain", "--repo", milesRepo(), "--file", "tests/fast/test_arguments.py"})
	if code != 0 || !strings.Contains(out, "implicit registration") || !strings.Contains(out, "enabled: no labels") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, _, stderr = runArgs([]string{"explain", "--repo", milesRepo(), "--file", "tests/e2e/utils.py"})
	if code != 1 || !strings.Contains(stderr, "is not a discovered test file") {
		t.Errorf("wanted an error for a non-test file, got %d %q", code, stderr)
	}
	// A disabled test that no label selects: it is disabled, and why, with
	// no advice to add a label that would only list it as skipped.
	code, out, _ = runArgs([]string{"explain", "--repo", milesRepo(), "--file", "tests/e2e/megatron/test_qwen3_4b_ckpt.py"})
	want := "not-selected: disabled: FIXME: ckpt loader regression after the dist-ckpt bump, so no run executes it (one that selects it lists it as skipped); labels [ckpt, megatron] share none with the include set []\n"
	if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "add a PR label") {
		t.Errorf("wanted %q, got %d %q", want, code, out)
	}
}

// A pool job (a run workflow that plans and splits its suites itself, like
// Miles' B200 job) makes one unpartitioned plan per suite its gate names; a
// gated suite that no backend lists is a clear error, not a plan of nothing.
func TestPlanAllPoolJob(t *testing.T) {
	pool := `
  stage-c-pool:
    needs: [policy, image, stage-a-cpu]
    if: |
      !contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), 'stage-c-8-gpu-h200') ||
      !contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), 'stage-c-8-gpu-x900')
    uses: ./.github/workflows/_run-ci-pool.yml
    with:
      container_image: ${{ needs.image.outputs.container_image }}
    secrets: inherit
`
	root := copyTree(t, milesRepo())
	p := filepath.Join(root, ".github", "workflows", "pr-test.yml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	testfiles.Write(t, root, ".github/workflows/pr-test.yml", string(data)+pool)
	code, _, stderr := runArgs([]string{"plan", "--repo", root, "--all"})
	want := "::error::stage stage-c-8-gpu-x900 (job stage-c-pool, .github/workflows/pr-test.yml:182) is in no backend's CI_SUITES, so it cannot be planned; add it to CI_SUITES in tests/ci/run_suite.py or fix the job's skipped_stages gate\n"
	if code != 1 || !strings.HasSuffix(stderr, want) {
		t.Errorf("wanted exit 1 and %q, got %d %q", want, code, stderr)
	}

	testfiles.Write(t, root, ".github/workflows/pr-test.yml", string(data)+strings.ReplaceAll(pool, "stage-c-8-gpu-x900", "stage-c-8-gpu-h100"))
	plans := planAllJSON(t, "--repo", root)
	// The roster: pr-test.yml's stages (the pool job last), the ROCm stage's
	// two shards, then the three external suites.
	var pooled []string
	for _, pl := range plans[len(plans)-7 : len(plans)-5] {
		if pl.Partition != nil {
			t.Errorf("wanted the pool's %s unpartitioned, got %+v", pl.Suite, pl.Partition)
		}
		pooled = append(pooled, pl.Suite)
	}
	if want := []string{"stage-c-8-gpu-h200", "stage-c-8-gpu-h100"}; !slices.Equal(pooled, want) {
		t.Errorf("wanted the pool's plans %q after the other pr-test.yml stages, got %q", want, pooled)
	}
}

func TestPolicyPullRequestDetails(t *testing.T) {
	repo := milesRepo()
	cudaDiff := filepath.Join(repo, "diffs", "cuda_test.z")
	missing := filepath.Join(t.TempDir(), "changed-files.z")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"a cadence override still prunes a pull request, as ci_policy.py does",
			[]string{"--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`, "--cadence-override", "weekly", "--changed-files", cudaDiff}, 0,
			"Resolved CI policy: cadence=weekly labels=[] bypass_fastfail=true skipped_stages=[\"stage-b-2-gpu-h200\",\"stage-c-4-gpu-h200\",\"stage-c-4-gpu-mi350\",\"stage-c-8-gpu-h100\",\"stage-c-8-gpu-h200\"]\n" +
				"  runnable: stage-b-2-gpu-h200, stage-c-2-gpu-h200, stage-c-4-gpu-h200, stage-c-4-gpu-mi350, stage-c-8-gpu-h100, stage-c-8-gpu-h200\n  affected: stage-c-2-gpu-h200\n", ""},
		{"a missing diff is named in the warning",
			[]string{"--event", "pull_request", "--pr-labels-json", `[]`, "--changed-files", missing}, 0,
			"", "::warning::changed files unusable (--changed-files " + missing + " does not exist); failing open: no GPU stage is skipped\n"},
		{"a diff that is a folder is named in the warning",
			[]string{"--event", "pull_request", "--pr-labels-json", `[]`, "--changed-files", repo}, 0,
			"", "::warning::changed files unusable (--changed-files " + repo + " is a folder, not a regular file); failing open: no GPU stage is skipped\n"},
		{"the event is required", []string{"--pr-labels-json", `[]`}, 2, "", "miles-ci policy: --event is required (or set EVENT_NAME, or give --cadence-override or --pr N)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(append([]string{"policy", "--repo", repo}, tt.args...))
			if code != tt.wantCode {
				t.Fatalf("wanted exit %d, got %d (%q)", tt.wantCode, code, stderr)
			}
			if tt.wantStdout != "" && stdout != tt.wantStdout {
				t.Errorf("wanted stdout %q, got %q", tt.wantStdout, stdout)
			}
			if !strings.HasPrefix(stderr, tt.wantStderr) {
				t.Errorf("wanted stderr %q, got %q", tt.wantStderr, stderr)
			}
		})
	}
}

func TestExplainRejectsConflictingFlags(t *testing.T) {
	repo := milesRepo()
	file := "tests/fast/test_arguments.py"
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string // first line
	}{
		{"event and cadence", []string{"--event", "schedule", "--schedule", "0 15 * * 6", "--cadence", "regular"}, 2,
			"miles-ci explain: --cadence conflicts with --event and --schedule: the trigger decides the cadence and labels; give one or the other"},
		{"pr labels and labels", []string{"--event", "pull_request", "--pr-labels-json", `["run-ci-fsdp"]`, "--labels", "run-ci-megatron"}, 2,
			"miles-ci explain: --labels conflicts with --event and --pr-labels-json: the trigger decides the cadence and labels; give one or the other"},
		{"nightly and cadence override", []string{"--cadence-override", "weekly", "--nightly"}, 2,
			"miles-ci explain: --nightly conflicts with --cadence-override: the trigger decides the cadence and labels; give one or the other"},
		{"pr labels without an event", []string{"--pr-labels-json", `["run-ci-fsdp"]`}, 2,
			"miles-ci explain: --pr-labels-json needs --event (or --cadence-override, or --pr): the event decides how --pr-labels-json is read"},
		{"cadence and nightly", []string{"--cadence", "weekly", "--nightly"}, 2, "miles-ci explain: --nightly is not allowed with --cadence; give one"},
		{"bad cadence", []string{"--cadence", "hourly"}, 2, `miles-ci explain: --cadence "hourly" is not one of regular, nightly, weekly, release`},
		{"trigger alone", []string{"--event", "schedule", "--schedule", "0 15 * * 6"}, 0, ""},
		{"labels alone", []string{"--labels", "run-ci-fsdp", "--cadence", "nightly"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkExitAndFirstLine(t, append([]string{"explain", "--repo", repo, "--file", file}, tt.args...), tt.wantCode, tt.wantStderr)
		})
	}
}

// TestPRBodyFileIsBounded checks that a FIFO or a device as --pr-body-file
// fails at once, naming the file, instead of hanging or reading for ever.
func TestPRBodyFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "body.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	big := filepath.Join(dir, "big.md")
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	const fix = "; give the file holding the pull request description (GitHub caps one at 65536 characters)\n"
	tests := []struct{ path, want string }{
		{fifo, "::error::--pr-body-file: " + fifo + " is a named pipe (FIFO), not a regular file" + fix},
		{"/dev/zero", "::error::--pr-body-file: /dev/zero is a device, not a regular file" + fix},
		{big, "::error::--pr-body-file: " + big + " is 1048577 bytes, more than the 1 MiB (1048576 bytes) a PR body file may be" + fix},
	}
	for _, tt := range tests {
		for _, cmd := range [][]string{{"image", "--backend", "cuda"}, {"deps", "--backend", "rocm"}, {"file-plan", "--repo", milesRepo(), "--file", "tests/fast/test_arguments.py"}} {
			t.Run(cmd[0]+" "+filepath.Base(tt.path), func(t *testing.T) {
				done := make(chan struct{})
				var code int
				var stderr string
				go func() {
					code, _, stderr = runArgs(append(cmd, "--pr-body-file", tt.path))
					close(done)
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("blocked on the PR body file")
				}
				if code != 1 || stderr != tt.want {
					t.Errorf("wanted exit 1 and %q, got %d and %q", tt.want, code, stderr)
				}
			})
		}
	}
}

// TestPlanInfiniteEstTime: Python reads est_time=1e400 as inf and prints it
// as inf; JSON cannot hold it, so --json says so instead of printing half.
func TestPlanInfiniteEstTime(t *testing.T) {
	repo := t.TempDir()
	p := filepath.Join(repo, "tests", "e2e", "test_inf.py")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`register_cuda_ci(est_time=1e400, suite="stage-c-2-gpu-h200", labels=["fsdp"])`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"plan", "--repo", repo, "--hw", "cuda", "--suite", "stage-c-2-gpu-h200", "--labels", "run-ci-fsdp"}
	code, stdout, _ := runArgs(args)
	if code != 0 || !strings.Contains(stdout, "Enabled 1 test(s) (est total infs):\n  - tests/e2e/test_inf.py (est_time=infs)\n") {
		t.Errorf("wanted inf printed as Python does, got %d %q", code, stdout)
	}
	code, stdout, stderr := runArgs(append(args, "--json"))
	want := "::error::the result cannot be written as JSON: an est_time is inf (a literal such as 1e400); give every test a finite est_time, or use the text output\n"
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("wanted exit 1, no stdout and %q, got %d %q %q", want, code, stdout, stderr)
	}
}

// plan of a B200 pool suite keeps stdout run_suite.py's --list-only text
// and shows the suite's pool jobs on stderr.
func TestPlanPoolSuiteStdoutIsListOnly(t *testing.T) {
	repo := filepath.Join("..", "..", "..", "testdata", "miles-b200pool")
	code, out, stderr := runCLI(t, nil, "plan", "--repo", repo, "--hw", "cuda", "--suite", "stage-c-8-gpu-b200", "--labels", "run-ci-megatron", "run-on-blackwell")
	if code != 0 || strings.Contains(out, "B200 pool") || !strings.Contains(out, "Enabled ") {
		t.Errorf("wanted only the --list-only text on stdout, got %d %q", code, out)
	}
	if !strings.Contains(stderr, "B200 pool (tests/ci/b200_plan.py): suites stage-c-8-gpu-b200") || !strings.Contains(stderr, "Batch 1: ") {
		t.Errorf("wanted the pool's batches on stderr, got %q", stderr)
	}
}
