package ci

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// TestCIReadsOnceAndPlansEachStageOnce: a whole ci run, dry and real (each
// shard passed by a fake runner), on a checkout in 31f1ca9's form and one of
// the B200 pool line (f030484dd), reads each workflow file and each file
// under tests/ at most once (the policy step ci_policy.py and run_suite.py
// among them, which the tables, the policy jobs and the registry all ask
// about) and plans each stage once (a stage's shard units, and a pool's file
// units, take their requests from that one plan).
func TestCIReadsOnceAndPlansEachStageOnce(t *testing.T) {
	checkouts := []struct {
		name, dir string
		req       CIRequest
	}{
		{name: "31f1ca9 nightly", dir: "miles", req: CIRequest{Event: "schedule", Schedule: "0 15 * * 0-5"}},
		{name: "31f1ca9 pull request", dir: "miles", req: CIRequest{Event: "pull_request", PRLabelsJSON: `["run-ci-megatron"]`}},
		{name: "B200 pool pull request", dir: "miles-b200pool", req: CIRequest{Event: "pull_request", PRLabelsJSON: `["run-ci-megatron","run-on-blackwell"]`}},
		{name: "B200 pool nightly", dir: "miles-b200pool", req: CIRequest{Event: "schedule", Schedule: "0 15 * * 0-5"}},
	}
	for _, c := range checkouts {
		for _, real := range []bool{false, true} {
			name := c.name + ", dry run"
			if real {
				name = c.name + ", real run"
			}
			t.Run(name, func(t *testing.T) {
				req := c.req
				req.Repo, req.Host = onceFixture(t, c.dir), cirun.Host{StandIn: true}
				if real {
					req.Shards = passShards{}
				}
				var mu sync.Mutex
				reads := map[string]int{}
				stop := fsinput.ObserveReads(func(p string) {
					rel, err := filepath.Rel(req.Repo, p)
					rel = filepath.ToSlash(rel)
					if err == nil && (strings.HasPrefix(rel, ".github/workflows/") || strings.HasPrefix(rel, "tests/")) {
						mu.Lock()
						reads[rel]++
						mu.Unlock()
					}
				})
				before := usecase.Plannings()
				ans, err := CI(context.Background(), req)
				plans := usecase.Plannings() - before
				stop()
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{".github/workflows/pr-test.yml", policy.CIPolicyFile, policy.RunSuiteFile} {
					if reads[f] == 0 {
						t.Errorf("wanted %s read, saw %v", f, reads)
					}
				}
				for p, n := range reads {
					if n != 1 {
						t.Errorf("wanted at most one read of %s, got %d", p, n)
					}
				}
				stages, units := map[string]bool{}, 0
				for _, j := range ans.Report.Jobs {
					ran := j.State == cirun.WouldRun || j.State == cirun.Passed
					switch {
					case j.Kind == cirun.KindStage && ran:
						stages[j.Stage] = true
						units++
					case j.Kind == cirun.KindPoolPlan && ran:
						stages[j.Key] = true
					case j.Kind == cirun.KindPoolRun && ran:
						units++
					}
				}
				if units <= len(stages) {
					t.Fatalf("wanted more shard units than stages, got %d units of %d stages\n%s", units, len(stages), ans.Report.Text())
				}
				t.Logf("%d plans, %d stages, %d units, %d files read", plans, len(stages), units, len(reads))
				if plans != int64(len(stages)) {
					t.Errorf("wanted one plan for each of the %d stages that ran (%d units), got %d plans", len(stages), units, plans)
				}
			})
		}
	}
}

// onceFixture is a checkout of this test's own: the tree of a fixture of
// testdata (miles in 31f1ca9's form, miles-b200pool in f030484dd's), its
// tests/ci files in the form both states give them: ci_policy.py is the
// resolve-ci-policy step (a main that reads CADENCE_OVERRIDE and writes
// skipped_stages), and run_suite.py takes its cadences from ci_policy.py and
// its discovery from ci_register.py. Each is a file the tables read, one the
// policy step's form is read from, and one the registry's discovery is.
func onceFixture(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), dir)
	testfiles.CopyTree(t, filepath.Join("..", "..", "testdata", dir), root)
	appendTo := func(rel, text string) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		testfiles.Write(t, root, rel, string(data)+text)
	}
	appendTo(policy.CIPolicyFile, `

import os


def main() -> int:
    cadence = os.environ.get("CADENCE_OVERRIDE") or "regular"
    with open(os.environ["GITHUB_OUTPUT"], "a") as out:
        out.write(f"cadence={cadence}\n")
        out.write("skipped_stages=[]\n")
    return 0
`)
	appendTo(policy.RunSuiteFile, `

from tests.ci.ci_policy import SCHEDULE_POLICIES
from tests.ci.ci_register import collect_tests, discover_ci_files
`)
	return root
}
