package usecase

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy"
)

// diffOf is a ReadDiff that gives diff, or says why it is unusable.
func diffOf(diff []byte, unusable string) func() ([]byte, string, error) {
	return func() ([]byte, string, error) { return diff, unusable, nil }
}

// TestPolicyFromPR checks which facts decide the policy of a pull request:
// the PR's event, labels and changed files, except the ones the caller gave;
// a diff that cannot be used skips no stage and says why.
func TestPolicyFromPR(t *testing.T) {
	tables, err := policy.LoadTables(milesRepo)
	if err != nil {
		t.Fatal(err)
	}
	pr := fetch(t, 2874, true)
	capped := *pr
	capped.ChangedFiles = github.MaxChangedFiles + 1
	tests := []struct {
		name     string
		req      PolicyRequest
		cadence  policy.Cadence
		labels   []string
		skipped  []string
		unusable string
	}{
		{name: "the PR is the trigger", req: PolicyRequest{PR: pr},
			cadence: policy.Regular, labels: []string{"run-ci-megatron"}, skipped: []string{"stage-c-8-gpu-h100"}},
		{name: "given labels win", req: PolicyRequest{PR: pr, Given: Given{PRLabels: true}, Trigger: policy.Trigger{PRLabelsJSON: `[]`}},
			cadence: policy.Regular, labels: []string{}, skipped: []string{"stage-b-2-gpu-h200", "stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-4-gpu-mi350", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200"}},
		{name: "a given event wins", req: PolicyRequest{PR: pr, Given: Given{Event: true}, Trigger: policy.Trigger{Event: policy.EventSchedule, Schedule: "0 15 * * 6"}},
			cadence: policy.Weekly, labels: []string{}, skipped: []string{}},
		{name: "a given diff wins over the PR's files", req: PolicyRequest{PR: pr, Given: Given{Diff: true}, ReadDiff: diffOf([]byte{}, "")},
			cadence: policy.Regular, labels: []string{"run-ci-megatron"}, skipped: []string{}, unusable: "the diff is empty"},
		{name: "a given diff that cannot be read fails open", req: PolicyRequest{PR: pr, Given: Given{Diff: true}, ReadDiff: diffOf(nil, "--changed-files x.z is a FIFO")},
			cadence: policy.Regular, labels: []string{"run-ci-megatron"}, skipped: []string{}, unusable: "--changed-files x.z is a FIFO"},
		{name: "a capped PR fails open", req: PolicyRequest{PR: &capped},
			cadence: policy.Regular, labels: []string{"run-ci-megatron"}, skipped: []string{}, unusable: "GitHub lists at most 3000"},
		{name: "no diff at all fails open", req: PolicyRequest{Trigger: policy.Trigger{Event: policy.EventPullRequest, PRLabelsJSON: `[]`}},
			cadence: policy.Regular, labels: []string{}, skipped: []string{}, unusable: "no changed-files input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Repo, tc.req.Tables = milesRepo, tables
			ans, err := Policy(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			o := ans.Outputs
			if o.Cadence != tc.cadence || !slices.Equal(o.RawLabels, tc.labels) || !slices.Equal(o.SkippedStages, tc.skipped) {
				t.Errorf("got cadence %s labels %q skipped %q, want %s %q %q", o.Cadence, o.RawLabels, o.SkippedStages, tc.cadence, tc.labels, tc.skipped)
			}
			got := ""
			if ans.Selection != nil {
				got = ans.Selection.DiffUnusable
			}
			if (tc.unusable == "") != (got == "") || !strings.Contains(got, tc.unusable) {
				t.Errorf("diff unusable %q, want %q", got, tc.unusable)
			}
		})
	}
}

// TestPolicyReadsNoDiffOffAPullRequest: the diff is read only when a pull
// request's policy needs it, so a schedule never opens --changed-files and a
// PR's own files stand in for a diff that was not given.
func TestPolicyReadsNoDiffOffAPullRequest(t *testing.T) {
	tables, err := policy.LoadTables(milesRepo)
	if err != nil {
		t.Fatal(err)
	}
	read := func() ([]byte, string, error) {
		t.Error("wanted the diff left unread")
		return nil, "", nil
	}
	for _, req := range []PolicyRequest{
		{Trigger: policy.Trigger{Event: policy.EventSchedule, Schedule: "0 15 * * 6"}, Given: Given{Diff: true}, ReadDiff: read},
		{PR: fetch(t, 2874, true), ReadDiff: read},
	} {
		req.Repo, req.Tables = milesRepo, tables
		if _, err := Policy(req); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadChangedFiles: an empty file is an empty diff (it skips every stage it
// can), a file that cannot be read is unusable with the reason naming it as the
// caller shows it (it skips none).
func TestReadChangedFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.z")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if diff, unusable := ReadChangedFiles(empty, "--changed-files"); diff == nil || len(diff) != 0 || unusable != "" {
		t.Errorf("empty file: wanted an empty diff, got %q %q", diff, unusable)
	}
	if diff, unusable := ReadChangedFiles(filepath.Join(dir, "gone.z"), "--changed-files"); diff != nil || unusable != "--changed-files does not exist" {
		t.Errorf("missing file: wanted unusable, got %q %q", diff, unusable)
	}
	if _, unusable := ReadChangedFiles(dir, "--changed-files "+dir); unusable != "--changed-files "+dir+" is a folder, not a regular file" {
		t.Errorf("folder: got %q", unusable)
	}
}

// TestPolicyUnusableDiffReadsNoRegistry: on a checkout whose ci_policy.py
// skips no stage on an unusable diff (the 31f1ca9 form), that policy reads no
// registration, so a broken test file elsewhere cannot fail it; in the later
// form (every selected stage affected) the registry is read and its fault is
// the answer, as the checkout's own code gives it.
func TestPolicyUnusableDiffReadsNoRegistry(t *testing.T) {
	tree := t.TempDir()
	testfiles.CopyTree(t, milesRepo, tree)
	testfiles.Write(t, tree, "tests/e2e/broken/test_broken.py", "register_cuda_ci(est_time=60, suite=\"stage-b-2-gpu-h200\", labels=[\"no-such-label\"])\n")
	later := t.TempDir()
	testfiles.CopyTree(t, tree, later)
	testfiles.Write(t, later, "tests/ci/ci_policy.py", "def main():\n    print(\"Changed-file diff is unavailable or empty; all selected GPU stages are treated as affected.\")\n    CADENCE_OVERRIDE = skipped_stages = None\n")
	for _, tc := range []struct {
		name, repo string
		diff       []byte
		unusable   string
		wantErr    bool
	}{
		{name: "missing diff, 31f1ca9 form", repo: tree, diff: nil},
		{name: "empty diff, 31f1ca9 form", repo: tree, diff: []byte{}},
		{name: "malformed diff, 31f1ca9 form", repo: tree, diff: []byte("Q\x00x.py\x00")},
		{name: "unreadable diff, 31f1ca9 form", repo: tree, unusable: "--changed-files x.z is a FIFO"},
		{name: "usable diff reads the registry", repo: tree, diff: []byte("M\x00train.py\x00"), wantErr: true},
		{name: "missing diff, later form", repo: later, diff: nil, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tables, err := policy.LoadTables(tc.repo)
			if err != nil {
				t.Fatal(err)
			}
			ans, err := Policy(PolicyRequest{Repo: tc.repo, Tables: tables, ReadDiff: diffOf(tc.diff, tc.unusable),
				Trigger: policy.Trigger{Event: policy.EventPullRequest, PRLabelsJSON: `["run-ci-megatron"]`}})
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "test_broken.py") {
					t.Fatalf("wanted the broken registration's error, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("wanted the policy, got %v", err)
			}
			if got := ans.Outputs.SkippedStages; len(got) != 0 {
				t.Errorf("wanted no stage skipped, got %q", got)
			}
			if ans.Selection == nil || ans.Selection.DiffUnusable == "" {
				t.Errorf("wanted the diff reported unusable, got %+v", ans.Selection)
			}
		})
	}
}
