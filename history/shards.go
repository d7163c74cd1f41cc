package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/radixark/miles-ci/estimate"
)

// ShardTable is miles-ci's own table beside Miles' attempts (issue 42): one
// row per stage shard or pool file a graph run ran, with when it started,
// how long it took, how much of that its files' attempts were (the rest is
// its set-up: image, layers, container start) and what the run predicted
// for it before it started, so a prediction and the run it predicts can be
// compared (history predictions) and the next prediction learns the set-up.
const ShardTable = "miles_ci_shard_runs"

// ShardRun is one shard's row: where and when it ran, its wall and test
// seconds, and the prediction.
type ShardRun struct {
	// Job is the shard as every output names it ("pr-test/stage-a-cpu
	// shard 2/4"); Stage and Backend its stage (CUDA, CPU, ROCM).
	Job     string `json:"job"`
	Stage   string `json:"stage"`
	Backend string `json:"backend"`
	// Host, Devices (as CUDA_VISIBLE_DEVICES lists them), GPUs and Model
	// say where it ran ("" for the one --gpus host, or no devices).
	Host    string `json:"host"`
	Devices string `json:"devices"`
	GPUs    int    `json:"gpus"`
	Model   string `json:"gpu_model"`
	// State is how it ended (passed, failed, ...).
	State string `json:"state"`
	// StartS is when it started, seconds after the run started; WallS how
	// long it took; TestsS the seconds of its files' attempts.
	StartS float64 `json:"start_s"`
	WallS  float64 `json:"wall_s"`
	TestsS float64 `json:"tests_s"`
	// PredictedStartS and PredictedS are what the run predicted before it
	// started (ci --what-if with the same tree, flags and history); nil when
	// it predicted none.
	PredictedStartS *float64 `json:"predicted_start_s,omitempty"`
	PredictedS      *float64 `json:"predicted_s,omitempty"`
}

// SetupS is the shard's set-up: its wall time less its files' attempts.
func (r ShardRun) SetupS() float64 { return max(r.WallS-r.TestsS, 0) }

// Check holds a shard run to the attempt rule's limits: finite seconds from
// 0, text without NUL, a job and a stage.
func (r ShardRun) Check() error {
	if r.Job == "" || r.Stage == "" {
		return errors.New("a shard run needs its job and stage")
	}
	for _, s := range []string{r.Job, r.Stage, r.Backend, r.Host, r.Devices, r.Model, r.State} {
		if err := checkText("shard run", s); err != nil {
			return err
		}
	}
	secs := []float64{r.StartS, r.WallS, r.TestsS}
	if r.PredictedStartS != nil {
		secs = append(secs, *r.PredictedStartS)
	}
	if r.PredictedS != nil {
		secs = append(secs, *r.PredictedS)
	}
	for _, s := range secs {
		if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 || s > estimate.MaxSeconds {
			return fmt.Errorf("shard run %s: %v s is not a number of seconds from 0 to %d", r.Job, s, estimate.MaxSeconds)
		}
	}
	if r.GPUs < 0 {
		return fmt.Errorf("shard run %s: %d GPUs", r.Job, r.GPUs)
	}
	return nil
}

// RecordedShard is a shard run as the table holds it, with its run.
type RecordedShard struct {
	ShardRun
	Provenance
	RecordedAt time.Time `json:"recorded_at"`
}

// shardColumns are the table's columns, in order.
var shardColumns = []string{"github_run_id", "github_run_attempt", "job", "stage", "backend", "host", "devices", "gpus", "gpu_model", "state",
	"start_seconds", "wall_seconds", "tests_seconds", "predicted_start_seconds", "predicted_seconds", "commit_sha", "event_name", "git_ref", "recorded_at"}

func shardSchema(postgres bool) []string {
	real, big, at := "REAL", "INTEGER", "TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')"
	strict := " STRICT"
	if postgres {
		real, big, at, strict = "DOUBLE PRECISION", "BIGINT", "TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP", ""
	}
	return []string{`CREATE TABLE IF NOT EXISTS ` + ShardTable + ` (
    github_run_id ` + big + ` NOT NULL,
    github_run_attempt INTEGER NOT NULL CHECK (github_run_attempt >= 1),
    job TEXT NOT NULL,
    stage TEXT NOT NULL,
    backend TEXT NOT NULL,
    host TEXT NOT NULL,
    devices TEXT NOT NULL,
    gpus INTEGER NOT NULL CHECK (gpus >= 0),
    gpu_model TEXT NOT NULL,
    state TEXT NOT NULL,
    start_seconds ` + real + ` NOT NULL CHECK (start_seconds >= 0),
    wall_seconds ` + real + ` NOT NULL CHECK (wall_seconds >= 0),
    tests_seconds ` + real + ` NOT NULL CHECK (tests_seconds >= 0),
    predicted_start_seconds ` + real + `,
    predicted_seconds ` + real + `,
    commit_sha TEXT NOT NULL,
    event_name TEXT NOT NULL,
    git_ref TEXT NOT NULL,
    recorded_at ` + at + `
)` + strict, `CREATE UNIQUE INDEX IF NOT EXISTS ` + ShardTable + `_run_job_key ON ` + ShardTable + ` (github_run_id, github_run_attempt, job)`}
}

// hasShardTable says whether the database holds the shard table, asked of
// its catalog (a failed SELECT would end a Postgres transaction).
func (s *sqlStore) hasShardTable(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) bool {
	query := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1"
	if s.d.name != "sqlite" {
		query = "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE tablename = $1 AND schemaname = ANY (current_schemas(false))"
	}
	var n int
	return q.QueryRowContext(ctx, query, ShardTable).Scan(&n) == nil && n > 0
}

// writeShard writes a batch's shard run in its transaction: a replay of
// the same run's job is a no-op. A SQLite file gains the table on its first
// shard run (the file is miles-ci's own); a Postgres database without it
// records the attempts alone and says so (history init adds it).
func (s *sqlStore) writeShard(ctx context.Context, tx *sql.Tx, b Batch) error {
	if !s.hasShardTable(ctx, tx) {
		if s.d.name != "sqlite" {
			s.noShardTable = true
			return nil
		}
		for _, stmt := range shardSchema(false) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return s.writeError(err)
			}
		}
	}
	r := b.Shard
	args := []any{b.RunID, b.RunAttempt, r.Job, r.Stage, r.Backend, r.Host, r.Devices, r.GPUs, r.Model, r.State, r.StartS, r.WallS, r.TestsS,
		nullable(r.PredictedStartS), nullable(r.PredictedS), b.CommitSHA, b.Event, b.Ref}
	marks := make([]string, len(args))
	for i := range marks {
		marks[i] = s.d.placeholder(i + 1)
	}
	cols := shardColumns[:len(shardColumns)-1]
	if at := s.recordedAt(b.RecordedAt); at != nil {
		args = append(args, at)
		marks = append(marks, s.d.placeholder(len(args)))
		cols = shardColumns
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO "+ShardTable+" ("+strings.Join(cols, ", ")+") VALUES ("+strings.Join(marks, ", ")+
		") ON CONFLICT (github_run_id, github_run_attempt, job) DO NOTHING", args...)
	if err != nil {
		return s.writeError(err)
	}
	return nil
}

func nullable(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// NoShardTable says that a write left its shard runs out: the Postgres
// database has no shard table (history init adds it).
func (s *sqlStore) NoShardTable() bool { return s.noShardTable }

func (s *sqlStore) Shards(ctx context.Context, from, before time.Time) ([]RecordedShard, error) {
	var out []RecordedShard
	err := s.call(ctx, s.statement, "reading", func(ctx context.Context) error {
		if !s.hasShardTable(ctx, s.db) {
			return nil // no graph run recorded its shards here yet
		}
		cond, args := s.window(from, before)
		rows, err := s.db.QueryContext(ctx, "SELECT "+strings.Join(shardColumns, ", ")+" FROM "+ShardTable+" WHERE "+cond+
			" ORDER BY recorded_at, github_run_id, github_run_attempt, start_seconds, job", args...)
		if err != nil {
			return s.fail("reading the shard runs of %s: %w", err)
		}
		defer rows.Close()
		skip := skips{where: s.where, table: ShardTable, rule: "a shard run's rules"}
		defer func() { s.skipped = append(s.skipped, skip.lines()...) }()
		for rows.Next() {
			var r RecordedShard
			var at any
			var ps, p sql.NullFloat64
			if err := rows.Scan(&r.RunID, &r.RunAttempt, &r.Job, &r.Stage, &r.Backend, &r.Host, &r.Devices, &r.GPUs, &r.Model, &r.State,
				&r.StartS, &r.WallS, &r.TestsS, &ps, &p, &r.CommitSHA, &r.Event, &r.Ref, &at); err != nil {
				return s.fail("reading the shard runs of %s: %w", err)
			}
			if ps.Valid {
				r.PredictedStartS = &ps.Float64
			}
			if p.Valid {
				r.PredictedS = &p.Float64
			}
			if r.RecordedAt, err = scanTime(at); err != nil {
				return fmt.Errorf("%s: recorded_at of %s: %w", s.where, r.Job, err)
			}
			if err := r.ShardRun.Check(); err != nil {
				skip.add(r.Job, r.RunID, err)
				continue
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			return s.fail("reading the shard runs of %s: %w", err)
		}
		return nil
	})
	return out, err
}
