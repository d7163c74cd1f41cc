package ci

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/usecase"
)

// TestCIReadsOnceAndPlansEachStageOnce: a whole ci run, dry and real (each
// shard passed by a fake runner), on the 31f1ca9 checkout and on the B200
// pool line, reads each workflow file once and plans each stage once (a
// stage's shard units, and a pool's file units, take their requests from
// that one plan).
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
				req.Repo, req.Host = filepath.Join("..", "..", "testdata", c.dir), cirun.Host{StandIn: true}
				if real {
					req.Shards = passShards{}
				}
				var mu sync.Mutex
				reads := map[string]int{}
				stop := fsinput.ObserveReads(func(p string) {
					if strings.Contains(filepath.ToSlash(p), ".github/workflows/") {
						mu.Lock()
						reads[filepath.ToSlash(p)]++
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
				if len(reads) == 0 {
					t.Fatal("wanted the workflow files read, saw none")
				}
				for p, n := range reads {
					if n != 1 {
						t.Errorf("wanted one read of %s, got %d", p, n)
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
				t.Logf("%d plans, %d stages, %d units, reads %v", plans, len(stages), units, reads)
				if plans != int64(len(stages)) {
					t.Errorf("wanted one plan for each of the %d stages that ran (%d units), got %d plans", len(stages), units, plans)
				}
			})
		}
	}
}
