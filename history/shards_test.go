package history_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/history/historytest"
)

func shardRun(job string, start, wall, tests float64, predicted *float64) *history.ShardRun {
	r := &history.ShardRun{Job: job, Stage: "stage-c-4-gpu-h200", Backend: "CUDA", Host: "h200-a", Devices: "0,1,2,3", GPUs: 4, Model: "h200", State: "passed",
		StartS: start, WallS: wall, TestsS: tests}
	if predicted != nil {
		ps := start + 1
		r.PredictedStartS, r.PredictedS = &ps, predicted
	}
	return r
}

// dropShardTable makes db a history of an older miles-ci (or Miles' own):
// its table without miles-ci's shard table.
func dropShardTable(t *testing.T, db string) {
	t.Helper()
	driver, dsn := "sqlite", db
	if history.IsPostgres(db) {
		driver = "pgx"
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("DROP TABLE " + history.ShardTable); err != nil {
		t.Fatal(err)
	}
}

// TestShardRuns: a graph run's shard rows go in with its attempts, one
// transaction, a replay a no-op; a database without the shard table (an
// older miles-ci's, Miles' own) gains it in SQLite, in Postgres keeps the
// attempts and says so until history init adds it.
func TestShardRuns(t *testing.T) {
	ctx := context.Background()
	for name, mk := range historytest.DBs(t) {
		t.Run(name, func(t *testing.T) {
			db := mk(t)
			s, err := history.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			p := 90.0
			b := batch(7, attempt(history.Pass, 1, 80))
			b.Shard = shardRun("pr-test/stage-c-4-gpu-h200 shard 1/3", 31, 100, 80, &p)
			for range 2 {
				if err := s.Write(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			// A shard that ran no file (no enabled test) still has its times.
			empty := batch(7)
			empty.Shard = shardRun("pr-test/stage-c-4-gpu-h200 shard 2/3", 31, 12, 0, nil)
			if err := s.Write(ctx, empty); err != nil {
				t.Fatal(err)
			}
			got, err := s.Shards(ctx, time.Time{}, time.Time{})
			if err != nil || len(got) != 2 {
				t.Fatalf("wanted 2 shard runs, got %+v (%v)", got, err)
			}
			if g := got[0]; g.SetupS() != 20 || *g.PredictedS != 90 || *g.PredictedStartS != 32 || g.RunID != 7 || g.RunAttempt != 2 || g.Devices != "0,1,2,3" || !g.RecordedAt.Equal(b.RecordedAt) {
				t.Errorf("wanted the first shard run as written, got %+v", g)
			}
			if g := got[1]; g.PredictedS != nil || g.WallS != 12 {
				t.Errorf("wanted a shard run with no prediction, got %+v", g)
			}
			bad := batch(8, attempt(history.Pass, 1, 1))
			bad.Shard = shardRun("x", -1, 1, 1, nil)
			if err := s.Write(ctx, bad); err == nil || !strings.Contains(err.Error(), "is not a number of seconds") {
				t.Errorf("wanted a negative start refused, got %v", err)
			}
			s.Close()

			dropShardTable(t, db)
			old, err := history.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			later := batch(9, attempt(history.Pass, 1, 80))
			later.Shard = shardRun("pr-test/stage-c-4-gpu-h200 shard 1/3", 0, 95, 80, nil)
			if err := old.Write(ctx, later); err != nil {
				t.Fatal(err)
			}
			rows, _ := old.Rows(ctx, time.Time{}, time.Time{})
			shards, err := old.Shards(ctx, time.Time{}, time.Time{})
			if err != nil || len(rows) != 2 {
				t.Fatalf("wanted the attempts written whatever the shard table, got %d rows (%v)", len(rows), err)
			}
			switch name {
			case "sqlite":
				if len(shards) != 1 || old.NoShardTable() {
					t.Errorf("SQLite: wanted the shard table made again and the run in it, got %+v", shards)
				}
			default:
				if len(shards) != 0 || !old.NoShardTable() {
					t.Errorf("Postgres: wanted no shard table made and it said, got %+v, %v", shards, old.NoShardTable())
				}
				created, err := history.Init(ctx, db)
				if err != nil || created != history.ShardTable+" beside the "+history.Table+" already there" {
					t.Fatalf("wanted history init to add the shard table, got %q, %v", created, err)
				}
				if _, err := history.Init(ctx, db); !errors.Is(err, history.ErrTableExists) {
					t.Errorf("wanted ErrTableExists once both are there, got %v", err)
				}
			}
		})
	}
}

// TestBadShardRowIsNamedInItsTable: a shard row a read leaves out (an
// Infinity of wall time) is said to be in the shard table, where it must
// be fixed, not in the attempts' table.
func TestBadShardRowIsNamedInItsTable(t *testing.T) {
	ctx := context.Background()
	db := t.TempDir() + "/h.db"
	s, err := history.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := batch(7, attempt(history.Pass, 1, 80))
	b.Shard = shardRun("pr-test/stage-c-4-gpu-h200 shard 1/3", 0, 100, 80, nil)
	if err := s.Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("UPDATE " + history.ShardTable + " SET wall_seconds = 9e999"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Shards(ctx, time.Time{}, time.Time{}); err != nil || len(got) != 0 {
		t.Fatalf("wanted the shard run left out, got %+v (%v)", got, err)
	}
	skipped := strings.Join(s.Skipped(), "\n")
	if !strings.Contains(skipped, "fix or delete them in "+history.ShardTable) || strings.Contains(skipped, "attempt rule") {
		t.Errorf("wanted the shard table named, got %q", skipped)
	}
}
