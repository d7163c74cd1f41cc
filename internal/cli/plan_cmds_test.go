package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func milesRepo() string { return filepath.Join("..", "..", "testdata", "miles") }

func TestPlanFlags(t *testing.T) {
	repo := milesRepo()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"labels take many words and stop at the next flag", []string{"plan", "--repo", repo, "--hw", "cuda", "--suite", "stage-c-2-gpu-h200", "--labels", "run-ci-megatron", "run-ci-fsdp", "--cadence", "regular"}, 0, ""},
		{"labels take zero words", []string{"plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-a-cpu", "--labels"}, 0, ""},
		{"partition id without size", []string{"plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-a-cpu", "--auto-partition-id", "0"}, 2,
			"miles-ci plan: --auto-partition-id and --auto-partition-size must be specified together.\n"},
		{"partition id out of range", []string{"plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-a-cpu", "--auto-partition-id", "4", "--auto-partition-size", "4"}, 2,
			"miles-ci plan: --auto-partition-id must be in range [0, 4), but got 4\n"},
		{"unknown suite", []string{"plan", "--repo", repo, "--hw", "rocm", "--suite", "stage-a-cpu"}, 1,
			"::error::Unknown suite stage-a-cpu for backend ROCM; the rocm suites are stage-c-4-gpu-mi350, nightly-stage-c-8-gpu-mi350, nightly-stage-c-4-gpu-mi350, nightly-stage-c-2-gpu-mi350\n"},
		{"unknown cadence", []string{"plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-a-cpu", "--cadence", "hourly"}, 1,
			"::error::Unknown CI cadence 'hourly'; expected one of ['nightly', 'regular', 'release', 'weekly']\n"},
		{"cadence and nightly exclude each other", []string{"plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-a-cpu", "--cadence", "regular", "--nightly"}, 1,
			"::error::argument --nightly: not allowed with argument --cadence\n"},
		{"nightly label needs nightly cadence", []string{"plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-a-cpu", "--labels", "nightly"}, 1,
			"::error::The nightly workflow label requires cadence='nightly' (got 'regular'); drop the nightly label or pass --cadence nightly\n"},
		{"unknown flag", []string{"plan", "--repo", repo, "--hardware", "cpu"}, 2, ""},
		{"missing hw", []string{"plan", "--repo", repo, "--suite", "stage-a-cpu"}, 2, "miles-ci plan: --hw and --suite are required (or --all)\n"},
		{"bad hw", []string{"plan", "--repo", repo, "--hw", "tpu", "--suite", "stage-a-cpu"}, 2, "miles-ci plan: unknown hardware backend \"tpu\"; use one of cpu, cuda, rocm\n"},
		{"label without prefix warns", []string{"plan", "--repo", repo, "--hw", "cpu", "--suite", "stage-b-cpu", "--labels", "megatron"}, 0,
			"::warning::--labels entry 'megatron' is missing the expected 'run-ci-' prefix; ignoring. Domain labels must be raw `run-ci-<X>` strings.\n"},
		{"missing repo", []string{"plan", "--repo", filepath.Join(t.TempDir(), "nope"), "--hw", "cpu", "--suite", "stage-a-cpu"}, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runArgs(tc.args)
			if code != tc.wantCode {
				t.Fatalf("wanted exit %d, got %d (stderr %q)", tc.wantCode, code, stderr)
			}
			if tc.wantStderr != "" && stderr != tc.wantStderr {
				t.Errorf("wanted stderr %q, got %q", tc.wantStderr, stderr)
			}
		})
	}
}

func TestPlanAll(t *testing.T) {
	code, out, stderr := runArgs([]string{"plan", "--repo", milesRepo(), "--all", "--cadence", "weekly", "--json"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var plans []struct {
		Suite     string `json:"suite"`
		Partition *struct{ ID, Size int }
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil {
		t.Fatal(err)
	}
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
	var res policyResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if "skipped_stages="+compactJSON(res.SkippedStages) != lines[4] {
		t.Errorf("JSON %v and output %q disagree", res.SkippedStages, lines[4])
	}

	code, _, stderr = runCLI(t, map[string]string{"EVENT_NAME": "push"}, "policy")
	if code != 1 || !strings.HasPrefix(stderr, "::error::Unsupported PR Test trigger: push") {
		t.Errorf("wanted ::error:: and exit 1, got %d %q", code, stderr)
	}
	code, stdout, _ = runCLI(t, map[string]string{"EVENT_NAME": "push"}, "policy", "--event", "schedule", "--schedule", "0 15 * * 6")
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
	write(t, root, ".github/workflows/pr-test.yml", string(data)+pool)
	code, _, stderr := runArgs([]string{"plan", "--repo", root, "--all"})
	want := "::error::stage stage-c-8-gpu-x900 (job stage-c-pool, .github/workflows/pr-test.yml:182) is in no backend's CI_SUITES, so it cannot be planned; add it to CI_SUITES in tests/ci/run_suite.py or fix the job's skipped_stages gate\n"
	if code != 1 || !strings.HasSuffix(stderr, want) {
		t.Errorf("wanted exit 1 and %q, got %d %q", want, code, stderr)
	}

	write(t, root, ".github/workflows/pr-test.yml", string(data)+strings.ReplaceAll(pool, "stage-c-8-gpu-x900", "stage-c-8-gpu-h100"))
	code, out, stderr := runArgs([]string{"plan", "--repo", root, "--all", "--json"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var plans []struct {
		Suite     string `json:"suite"`
		Partition *struct{ ID, Size int }
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil {
		t.Fatal(err)
	}
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
