package runhistory

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/history/historytest"
	"github.com/radixark/miles-ci/policy"
)

// BenchmarkImportAndCalibrate writes 100,000 attempts (one batch per run
// of 100 files, as a stage records them) and calibrates a checkout from
// them: the fixture tree, or the Miles checkout MILES_CI_BENCH_REPO names
// (its active CUDA e2e registrations get the samples). Compare with
// update_est_time.py on the same rows (docs/history.md).
func BenchmarkImportAndCalibrate(b *testing.B) {
	repo := os.Getenv("MILES_CI_BENCH_REPO")
	if repo == "" {
		repo = "testdata/esttime/tree"
	}
	reg, err := policy.LoadRegistry(repo)
	if err != nil {
		b.Fatal(err)
	}
	var ids []estimate.Identity
	for _, r := range reg.Registrations {
		if r.Backend == policy.CUDA && r.Disabled == nil && len(r.File) > 10 && r.File[:10] == "tests/e2e/" {
			ids = append(ids, estimate.Identity{TestPath: r.File, Backend: "CUDA", Suite: r.Suite})
		}
	}
	const total, perRun = 100_000, 100
	upper := time.Date(2026, 8, 12, 0, 0, 0, 0, time.UTC)
	var batches []history.Batch
	for run := 0; run*perRun < total; run++ {
		bt := history.Batch{Provenance: history.Provenance{CommitSHA: fmt.Sprintf("c%d", run), RunID: int64(1000 + run), RunAttempt: 1,
			Event: "schedule", Ref: "refs/heads/main"}, RecordedAt: upper.Add(-time.Duration(run) * 30 * time.Minute)}
		for k := 0; k < perRun; k++ {
			id := ids[(run*perRun+k)%len(ids)]
			bt.Attempts = append(bt.Attempts, history.Attempt{TestPath: id.TestPath, Backend: id.Backend, Suite: id.Suite,
				TestAttempt: 1 + (run*perRun+k)/len(ids)%50, Status: history.Pass, ElapsedS: float64(60 + (run*7+k*13)%500), EstimatedS: 60})
		}
		batches = append(batches, bt)
	}
	for name, newDB := range historytest.DBs(b) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				db := newDB(b)
				b.StartTimer()
				store, err := history.Open(context.Background(), db)
				if err != nil {
					b.Fatal(err)
				}
				for _, bt := range batches {
					if err := store.Write(context.Background(), bt); err != nil {
						b.Fatal(err)
					}
				}
				store.Close()
				if _, err := EstTime(context.Background(), EstTimeRequest{Repo: repo, DB: db, AsOf: upper, DryRun: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
