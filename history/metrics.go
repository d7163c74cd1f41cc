package history

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"
	"time"

	"github.com/radixark/miles-ci/metricgate"
)

// MetricStore is Miles' metric-history store (rules §16): the tables runs
// and metric_values of its SQLiteMetricHistoryStore (a Miles SQLite file
// is used as it is) or of the hosted Postgres (NeonMetricHistoryStore),
// which the gate reads its baselines from and baseline-writing runs write.
// It uses the runtime history's connections, deadlines and masking.
type MetricStore struct {
	s *sqlStore
}

// EnvGateDB names the metric-history store of a run's --gate-db.
const EnvGateDB = "MILES_CI_GATE_DB"

// metricsSQLiteSchema is Miles' sqlite_store._SCHEMA_SQL.
var metricsSQLiteSchema = []string{`CREATE TABLE IF NOT EXISTS runs (
    run_id              TEXT PRIMARY KEY,
    test_path           TEXT NOT NULL,
    backend             TEXT NOT NULL,
    suite               TEXT NOT NULL,
    commit_sha          TEXT NOT NULL,
    pr_number           INTEGER,
    github_run_id       INTEGER,
    github_run_attempt  INTEGER,
    event_name          TEXT,
    ref                 TEXT,
    created_at          TEXT NOT NULL,
    trusted             INTEGER NOT NULL
)`, `CREATE TABLE IF NOT EXISTS metric_values (
    run_id          TEXT NOT NULL REFERENCES runs(run_id),
    metric_key      TEXT NOT NULL,
    steps_key       TEXT NOT NULL,
    constraint_key  TEXT NOT NULL,
    step            INTEGER NOT NULL,
    value           REAL NOT NULL
)`, `CREATE INDEX IF NOT EXISTS runs_baseline_idx
    ON runs (test_path, backend, suite, trusted, created_at DESC)`}

// metricsPostgresSchema is the hosted tables as Miles' tests provision
// them (the production schema is provisioned out of band).
var metricsPostgresSchema = []string{`CREATE TABLE IF NOT EXISTS runs (
    run_id              TEXT PRIMARY KEY,
    test_path           TEXT NOT NULL,
    backend             TEXT NOT NULL,
    suite               TEXT NOT NULL,
    commit_sha          TEXT NOT NULL,
    pr_number           INTEGER,
    github_run_id       BIGINT,
    github_run_attempt  INTEGER,
    event_name          TEXT,
    ref                 TEXT,
    created_at          TIMESTAMPTZ NOT NULL,
    trusted             BOOLEAN NOT NULL
)`, `CREATE TABLE IF NOT EXISTS metric_values (
    run_id         TEXT NOT NULL REFERENCES runs(run_id),
    metric_key     TEXT NOT NULL,
    steps_key      TEXT NOT NULL,
    constraint_key TEXT NOT NULL,
    step           INTEGER NOT NULL,
    value          DOUBLE PRECISION NOT NULL
)`, `CREATE INDEX IF NOT EXISTS runs_baseline_idx
    ON runs (test_path, backend, suite, trusted, created_at DESC)`, `CREATE INDEX IF NOT EXISTS metric_values_run_id_idx
    ON metric_values (run_id)`}

var (
	runColumns    = []string{"run_id", "test_path", "backend", "suite", "commit_sha", "pr_number", "github_run_id", "github_run_attempt", "event_name", "ref", "created_at", "trusted"}
	metricColumns = []string{"run_id", "metric_key", "steps_key", "constraint_key", "step", "value"}
)

// OpenMetrics opens the metric-history store db names (a postgres:// URL
// or a SQLite file), whose tables must exist; a writer creates a SQLite
// file that does not exist yet with Miles' schema, a reader never creates
// or changes one.
func OpenMetrics(ctx context.Context, db string, write bool) (*MetricStore, error) {
	var s *sqlStore
	var err error
	create := false
	if IsPostgres(db) {
		s, err = openPostgres(db)
	} else {
		if create, err = checkMetricsPath(db, write); err != nil {
			return nil, err
		}
		s, err = openSQLiteWAL(db, !write, false)
	}
	if err != nil {
		return nil, err
	}
	s.noun = "the metric history"
	m := &MetricStore{s: s}
	if create {
		if err := m.create(ctx, metricsSQLiteSchema); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := m.checkTables(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return m, nil
}

// InitMetrics creates Miles' two tables in db where they are missing (a
// SQLite file is created): the hosted database is provisioned out of band
// in Miles, so this is for a store of one's own and for tests.
func InitMetrics(ctx context.Context, db string) error {
	schema := metricsSQLiteSchema
	var s *sqlStore
	var err error
	if IsPostgres(db) {
		schema = metricsPostgresSchema
		s, err = openPostgres(db)
	} else {
		if _, err := checkMetricsPath(db, true); err != nil {
			return err
		}
		s, err = openSQLiteWAL(db, false, false)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	s.noun = "the metric history"
	return (&MetricStore{s: s}).create(ctx, schema)
}

// checkMetricsPath refuses a SQLite path that is a symlink or not a
// regular file; a reader needs the file, a writer creates it (create).
func checkMetricsPath(path string, write bool) (create bool, err error) {
	if path == "" {
		return false, errors.New("no metric-history store named; give --gate-db (or --db) a SQLite file or a postgres:// URL")
	}
	if err := checkNotKeywordDSN(path); err != nil {
		return false, err
	}
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !write:
		return false, fmt.Errorf("the metric history %s does not exist; give the SQLite file Miles' SQLiteMetricHistoryStore wrote, or a postgres:// URL", path)
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("the metric history %s: %w", path, err)
	case info.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return false, fmt.Errorf("the metric history %s is a symlink to %s; miles-ci follows no link to a database, so name the file itself", path, target)
	case !info.Mode().IsRegular():
		return false, fmt.Errorf("the metric history %s is not a regular file; give a SQLite file", path)
	}
	// An empty file is an empty SQLite database: a writer gives it the
	// tables, as Miles' store does when it opens one.
	return info.Size() == 0 && write, nil
}

func (m *MetricStore) create(ctx context.Context, schema []string) error {
	return m.s.call(ctx, m.s.connect, "creating the tables in", func(ctx context.Context) error {
		tx, err := m.s.db.BeginTx(ctx, nil)
		if err != nil {
			return m.s.fail("creating the tables runs and metric_values in %s: %w", err)
		}
		for _, stmt := range schema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				tx.Rollback()
				return m.s.fail("creating the tables runs and metric_values in %s: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return m.s.fail("creating the tables runs and metric_values in %s: %w", err)
		}
		return nil
	})
}

// checkTables refuses a database without Miles' two tables or one of
// their columns.
func (m *MetricStore) checkTables(ctx context.Context) error {
	return m.s.call(ctx, m.s.connect, "opening", func(ctx context.Context) error {
		for _, q := range []string{
			"SELECT " + strings.Join(runColumns, ", ") + " FROM runs LIMIT 0",
			"SELECT " + strings.Join(metricColumns, ", ") + " FROM metric_values LIMIT 0",
		} {
			rows, err := m.s.db.QueryContext(ctx, q)
			if err != nil {
				if hint := m.s.hint(err); hint != "" && !strings.Contains(hint, Table) {
					return fmt.Errorf("%s %s (%v)", m.s.where, hint, m.s.d.mask(err))
				}
				return fmt.Errorf("%s has no usable tables runs and metric_values of Miles' metric history (%v); point at the store Miles' gate writes (docs/gate.md shows its schema)", m.s.where, m.s.d.mask(err))
			}
			rows.Close()
		}
		return nil
	})
}

// Close closes the store.
func (m *MetricStore) Close() error { return m.s.Close() }

// Where names the store without a password.
func (m *MetricStore) Where() string { return m.s.where }

// Recent is the baseline query (recent_trusted_values), Miles' SQL as its
// two stores write it.
func (m *MetricStore) Recent(ctx context.Context, id metricgate.Identity, c metricgate.Coordinate, limit int) ([]float64, error) {
	if !c.Step.IsInt64() {
		if m.s.d.name == "sqlite" {
			return nil, fmt.Errorf("OverflowError: step %s does not fit SQLite's INTEGER", c.Step)
		}
		return nil, nil // Postgres compares it and finds no row
	}
	p := m.s.d.placeholder
	trusted := "1"
	if m.s.d.name != "sqlite" {
		trusted = "true"
	}
	query := `SELECT mv.value
FROM metric_values mv
JOIN runs r USING (run_id)
WHERE r.test_path = ` + p(1) + `
  AND r.backend = ` + p(2) + `
  AND r.suite = ` + p(3) + `
  AND mv.metric_key = ` + p(4) + `
  AND mv.steps_key = ` + p(5) + `
  AND mv.constraint_key = ` + p(6) + `
  AND mv.step = ` + p(7) + `
  AND r.trusted = ` + trusted + `
ORDER BY r.created_at DESC
LIMIT ` + p(8)
	var out []float64
	err := m.s.call(ctx, m.s.statement, "reading", func(ctx context.Context) error {
		rows, err := m.s.db.QueryContext(ctx, query, id.TestPath, id.Backend, id.Suite, c.Metric, c.StepsKey, c.ConstraintKey, c.Step.Int64(), limit)
		if err != nil {
			return m.s.fail("reading the metric history of %s: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var v float64
			if err := rows.Scan(&v); err != nil {
				return m.s.fail("reading the metric history of %s: %w", err)
			}
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			return m.s.fail("reading the metric history of %s: %w", err)
		}
		return nil
	})
	return out, err
}

// MetricRun is one run a baseline-writing run stores (write_run): its
// identity, where it came from, when, whether the gate trusted it, and its
// values.
type MetricRun struct {
	Identity   metricgate.Identity
	Provenance metricgate.Provenance
	CreatedAt  time.Time
	Trusted    bool
	Values     []metricgate.Sample
}

// WriteRun stores a run and its values in one transaction and returns its
// run_id (uuid4().hex, as Miles' stores make it); a non-finite value is
// refused before anything is written.
func (m *MetricStore) WriteRun(ctx context.Context, run MetricRun) (string, error) {
	for _, v := range run.Values {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			return "", fmt.Errorf("non-finite metric value %v for %q (step=%s); non-finite values never enter the store", v.Value, v.Metric, v.Step)
		}
		if !v.Step.IsInt64() {
			return "", fmt.Errorf("step %s of %q does not fit the store's INTEGER", v.Step, v.Metric)
		}
	}
	id := uuid4Hex()
	p := m.s.d.placeholder
	var createdAt, trusted any = pyISOFormat(run.CreatedAt), 0
	if m.s.d.name == "sqlite" {
		if run.Trusted {
			trusted = 1
		}
	} else {
		createdAt, trusted = run.CreatedAt.UTC(), run.Trusted
	}
	marks := func(n int) string {
		out := make([]string, n)
		for k := range out {
			out[k] = p(k + 1)
		}
		return strings.Join(out, ", ")
	}
	pv := run.Provenance
	err := m.s.call(ctx, m.s.statement, "writing to", func(ctx context.Context) error {
		tx, err := m.s.db.BeginTx(ctx, nil)
		if err != nil {
			return m.s.fail("writing the metric history to %s: %w; nothing was written", err)
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO runs ("+strings.Join(runColumns, ", ")+") VALUES ("+marks(len(runColumns))+")",
			id, run.Identity.TestPath, run.Identity.Backend, run.Identity.Suite, pv.CommitSHA, pv.PRNumber, pv.RunID, pv.RunAttempt, pv.Event, pv.Ref, createdAt, trusted)
		for _, v := range run.Values {
			if err != nil {
				break
			}
			_, err = tx.ExecContext(ctx, "INSERT INTO metric_values ("+strings.Join(metricColumns, ", ")+") VALUES ("+marks(len(metricColumns))+")",
				id, v.Metric, v.StepsKey, v.ConstraintKey, v.Step.Int64(), v.Value)
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			tx.Rollback()
			return m.s.fail("writing the metric history to %s: %w; nothing was written", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// uuid4Hex is uuid.uuid4().hex: 128 random bits with the version and
// variant bits of a version-4 UUID, as 32 hex digits.
func uuid4Hex() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

// pyISOFormat is datetime.now(timezone.utc).isoformat(), the created_at
// text Miles' SQLite store keeps (and orders by): microseconds only when
// not zero.
func pyISOFormat(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s + "+00:00"
}
