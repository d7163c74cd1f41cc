package ci

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// releaseCut is a release branch cut in the shape of Miles' (rules §12.5),
// written for this test: the cut job, then both PR workflows called at
// cadence release, the CUDA one with the lockfile's image.
const releaseCut = `on:
  workflow_dispatch:
    inputs:
      branch_name:
        default: ''
jobs:
  cut-release-branch:
    runs-on: ubuntu-latest
    outputs:
      branch_name: x
      ci_image_tag: x
    steps:
      - run: git push
  run-tests-cuda:
    needs: cut-release-branch
    uses: ./.github/workflows/pr-test.yml
    with:
      cadence: release
      image_tag: ${{ needs.cut-release-branch.outputs.ci_image_tag }}
  run-tests-rocm:
    needs: cut-release-branch
    uses: ./.github/workflows/pr-test-rocm.yml
    with:
      cadence: release
`

// ciTree is testdata/miles with a release branch cut whose PR workflows
// take a workflow_call.
func ciTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, filepath.Join("..", "..", "testdata", "miles"), dir)
	testfiles.Write(t, dir, cirun.ReleaseWorkflow, releaseCut)
	for _, wf := range cirun.PRWorkflows {
		text := readTree(t, dir, wf)
		testfiles.Write(t, dir, wf, strings.Replace(text, "  workflow_dispatch:\n", "  workflow_dispatch:\n  workflow_call:\n    inputs:\n      cadence:\n        default: release\n      image_tag:\n        default: ''\n", 1))
	}
	return dir
}

func TestCIEvents(t *testing.T) {
	repo := ciTree(t)
	lock := &deps.Lock{ReleaseBranch: "release/v0.1.0", CIImageTag: "release-v0.1.0-ci"}
	tests := []struct {
		name string
		req  CIRequest
		// runs and skipped count the stage entries that would run (the
		// roster has 17 shards) and the skipped stages; job has reason.
		runs, skipped int
		job, reason   string
	}{
		{name: "pull request with labels and a diff", req: CIRequest{Event: "pull_request", PRLabelsJSON: `["run-ci-megatron"]`,
			ReadDiff: func() ([]byte, string, error) {
				d, why := usecase.ReadChangedFiles(filepath.Join(repo, "diffs", "cpu_only.z"), "diff")
				return d, why, nil
			}, Given: usecase.Given{Diff: true}},
			runs: 15, skipped: 1, job: "pr-test/stage-c-8-gpu-h100", reason: "the policy skips it on this pull request (skipped_stages, rules §4)"},
		{name: "nightly cron", req: CIRequest{Event: "schedule", Schedule: "0 15 * * 0-5"}, runs: 17, job: "pr-test/policy",
			reason: `cadence=nightly raw_labels= bypass_fastfail=true skipped_stages=[]`},
		{name: "weekly cron", req: CIRequest{Event: "schedule", Schedule: "0 15 * * 6"}, runs: 17, job: "pr-test/policy",
			reason: `cadence=weekly raw_labels= bypass_fastfail=true skipped_stages=[]`},
		{name: "dispatch", req: CIRequest{Event: "workflow_dispatch", ImageTag: "nightly-x"}, runs: 17, job: "pr-test/image",
			reason: "image radixark/miles:nightly-x (input)"},
		{name: "release call", req: CIRequest{Event: "release", Release: lock}, runs: 17, job: "run-tests-cuda/image",
			reason: "image radixark/miles:release-v0.1.0-ci (called)"},
		{name: "closed pull request", req: CIRequest{Event: "pull_request", Action: "closed"}, skipped: 0, job: "pr-test/policy", reason: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Repo, tt.req.Host = repo, cirun.Host{StandIn: true}
			ans, err := CI(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			runs, skipped := 0, 0
			for _, j := range ans.Report.Jobs {
				if j.Kind == cirun.KindStage {
					switch j.State {
					case cirun.WouldRun:
						runs++
					case cirun.Skipped:
						skipped++
					}
				}
				if j.Key == tt.job && tt.reason != "" && j.Reason != tt.reason {
					t.Errorf("%s: wanted %q, got %q", j.Key, tt.reason, j.Reason)
				}
			}
			if runs != tt.runs || (tt.skipped > 0 && skipped != tt.skipped) {
				t.Errorf("wanted %d shards to run and %d stages skipped, got %d and %d\n%s", tt.runs, tt.skipped, runs, skipped, ans.Report.Text())
			}
		})
	}
}

func readTree(t *testing.T, dir, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCIPool: the B200 pool job of testdata/miles-b200pool as the dry run
// lays it out, one unit per planned file in batch order. The expected lists
// are what Miles' tests/ci/b200_plan.py (the stored copy, run in a worktree
// of f030484dd with the pool line's other files) planned for the same
// cadence, labels and --suites (docs/ci.md).
func TestCIPool(t *testing.T) {
	repo := filepath.Join("..", "..", "testdata", "miles-b200pool")
	tests := []struct {
		name string
		req  CIRequest
		// want are "BATCH FILE SUITE GPUS RUNS_ON" of each pool unit; job
		// is the pool job's state.
		want []string
		job  cirun.State
	}{
		{name: "pull request, megatron on Blackwell", req: CIRequest{Event: "pull_request", PRLabelsJSON: `["run-ci-megatron","run-on-blackwell"]`},
			want: []string{
				"1 tests/e2e/megatron/test_b200_eight.py stage-c-8-gpu-b200 8 [b200 8gpu]",
				"1 tests/e2e/megatron/test_portable_eight.py stage-c-8-gpu-b200 8 [b200 8gpu]",
				"1 tests/e2e/megatron/test_portable_four.py stage-c-4-gpu-b200 2 [b200 2gpu]",
			}, job: cirun.WouldRun},
		{name: "pull request, short on Blackwell: only the 4-GPU suite", req: CIRequest{Event: "pull_request", PRLabelsJSON: `["run-on-blackwell","run-ci-short"]`},
			want: []string{
				"1 tests/e2e/short/test_b200_two.py stage-c-4-gpu-b200 2 [b200 2gpu]",
				"1 tests/e2e/short/test_b200_one.py stage-c-4-gpu-b200 1 [b200 1gpu]",
			}, job: cirun.WouldRun},
		{name: "weekly cron: two batches", req: CIRequest{Event: "schedule", Schedule: "0 15 * * 6"},
			want: []string{
				"1 tests/e2e/long/test_b200_huge.py stage-c-8-gpu-b200 8 [b200 8gpu]",
				"1 tests/e2e/long/test_b200_long.py stage-c-8-gpu-b200 4 [b200 4gpu]",
				"2 tests/e2e/megatron/test_b200_eight.py stage-c-8-gpu-b200 8 [b200 8gpu]",
				"2 tests/e2e/short/test_b200_two.py stage-c-4-gpu-b200 2 [b200 2gpu]",
				"2 tests/e2e/short/test_b200_one.py stage-c-4-gpu-b200 1 [b200 1gpu]",
			}, job: cirun.WouldRun},
		{name: "pull request with no label: both B200 suites skipped", req: CIRequest{Event: "pull_request", PRLabelsJSON: `[]`}, job: cirun.Skipped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Repo, tt.req.Host = repo, cirun.Host{Devices: device.Set{"0", "1", "2", "3", "4", "5", "6", "7"}}
			ans, err := CI(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var job cirun.State
			for _, j := range ans.Report.Jobs {
				if j.Batch > 0 {
					got = append(got, fmt.Sprintf("%d %s %s %d %v", j.Batch, j.File, j.Stage, j.GPUs, j.RunsOn))
					if want := "--test-file " + j.File + " "; !strings.Contains(j.Command, want) || len(j.Tests) != 1 || j.Tests[0] != j.File {
						t.Errorf("%s: wanted its command to run %q alone, got %q and %v", j.Title(), j.File, j.Command, j.Tests)
					}
				}
				if j.Key == "pr-test/stage-c-b200" {
					job = j.State
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("wanted the pool units\n%s\ngot\n%s", strings.Join(tt.want, "\n"), strings.Join(got, "\n"))
			}
			if job != tt.job {
				t.Errorf("stage-c-b200: wanted %q, got %q", tt.job, job)
			}
			if code := ans.Report.ExitStatus(); code != cirun.ExitPassed {
				t.Errorf("wanted exit 0, got %d\n%s", code, ans.Report.Text())
			}
		})
	}
}

// TestEveryCommandFillsFromPROneWay: plan's stage run, policy and ci read one
// pull request the same way: an environment's labels that were not given
// lose to the PR's, as the policy command has always done.
func TestEveryCommandFillsFromPROneWay(t *testing.T) {
	pr := &github.PR{Number: 7, State: "open", Labels: []string{"run-ci-megatron"}}
	repo := filepath.Join("..", "..", "testdata", "miles")
	trig := usecase.PRTrigger(policy.Trigger{Event: "push", PRLabelsJSON: `["from-env"]`}, pr, usecase.Given{})
	ev, err := ciEvent(CIRequest{Repo: repo, Event: "push", PRLabelsJSON: `["from-env"]`, PR: pr, Host: cirun.Host{StandIn: true}})
	if err != nil {
		t.Fatal(err)
	}
	if trig.Event != ev.Name || trig.PRLabelsJSON != labelsJSON(ev.Labels) {
		t.Errorf("wanted policy and ci to read the PR alike, got %s %s and %s %v", trig.Event, trig.PRLabelsJSON, ev.Name, ev.Labels)
	}
	if _, err := CI(context.Background(), CIRequest{Repo: repo, PR: pr, Host: cirun.Host{StandIn: true}}); err != nil {
		t.Errorf("wanted a ci dry run of the PR, got %v", err)
	}
}
