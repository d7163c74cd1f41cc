package history_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/history/historytest"
	"github.com/radixark/miles-ci/metricgate"
)

// metricsDBs are an empty metric-history store of each back end.
func metricsDBs(t *testing.T) map[string]func(t testing.TB) string {
	out := map[string]func(t testing.TB) string{}
	for name, newDB := range historytest.DBs(t) {
		out[name] = func(t testing.TB) string {
			db := newDB(t)
			if err := history.InitMetrics(context.Background(), db); err != nil {
				t.Fatal(err)
			}
			return db
		}
	}
	return out
}

func coord(metric string, step int64) metricgate.Coordinate {
	return metricgate.Coordinate{Metric: metric, StepsKey: `"all"`, ConstraintKey: `{"rel_down":1,"rel_up":1}`, Step: big.NewInt(step)}
}

// TestMetricStoreBaseline: the baseline query returns the trusted values of
// the identity at the coordinate, newest run first, at most limit; a run
// marked untrusted, another suite and another step stay out; each back end
// answers alike.
func TestMetricStoreBaseline(t *testing.T) {
	ctx := context.Background()
	id := metricgate.Identity{TestPath: "tests/e2e/test_x.py", Backend: "cuda", Suite: "stage-c-4-gpu-h200"}
	for name, newDB := range metricsDBs(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			s, err := history.OpenMetrics(ctx, db, true)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			at := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
			write := func(id metricgate.Identity, day int, trusted bool, v float64) {
				t.Helper()
				_, err := s.WriteRun(ctx, history.MetricRun{Identity: id, CreatedAt: at.AddDate(0, 0, day), Trusted: trusted,
					Provenance: metricgate.Provenance{CommitSHA: "abc"},
					Values:     []metricgate.Sample{{Coordinate: coord("train/ppo_kl", 0), Value: v}, {Coordinate: coord("train/ppo_kl", 1), Value: v + 100}}})
				if err != nil {
					t.Fatal(err)
				}
			}
			write(id, 0, true, 1)
			write(id, 2, true, 3)
			write(id, 1, true, 2)
			write(id, 3, false, 4)
			other := id
			other.Suite = "stage-c-8-gpu-h100"
			write(other, 4, true, 5)
			got, err := s.Recent(ctx, id, coord("train/ppo_kl", 0), 2)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []float64{3, 2}) {
				t.Errorf("wanted the two newest trusted values [3 2], got %v", got)
			}
			if got, _ := s.Recent(ctx, id, coord("train/ppo_kl", 1), 20); !slices.Equal(got, []float64{103, 102, 101}) {
				t.Errorf("wanted step 1's own history, got %v", got)
			}
			if got, _ := s.Recent(ctx, id, coord("train/grad_norm", 0), 20); len(got) != 0 {
				t.Errorf("wanted no history of another metric, got %v", got)
			}
			if _, err := s.WriteRun(ctx, history.MetricRun{Identity: id, CreatedAt: at, Values: []metricgate.Sample{{Coordinate: coord("m", 0), Value: math.NaN()}}}); err == nil {
				t.Error("wanted a NaN value refused")
			}
		})
	}
}

// TestMetricStoreReadsMilesFile: a SQLite file with Miles' schema and rows as
// its store writes them (created_at as isoformat text, trusted 0/1) is read
// as it is, and writing to it leaves its journal mode alone.
func TestMetricStoreReadsMilesFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "metric_history.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE runs (run_id TEXT PRIMARY KEY, test_path TEXT NOT NULL, backend TEXT NOT NULL, suite TEXT NOT NULL,
			commit_sha TEXT NOT NULL, pr_number INTEGER, github_run_id INTEGER, github_run_attempt INTEGER, event_name TEXT, ref TEXT,
			created_at TEXT NOT NULL, trusted INTEGER NOT NULL)`,
		`CREATE TABLE metric_values (run_id TEXT NOT NULL REFERENCES runs(run_id), metric_key TEXT NOT NULL, steps_key TEXT NOT NULL,
			constraint_key TEXT NOT NULL, step INTEGER NOT NULL, value REAL NOT NULL)`,
		`INSERT INTO runs VALUES ('a1', 't.py', 'cuda', 's', 'abc', NULL, 7, 1, 'schedule', 'refs/heads/main', '2026-08-01T10:00:00.123456+00:00', 1)`,
		`INSERT INTO runs VALUES ('a2', 't.py', 'cuda', 's', 'abc', 12, NULL, NULL, NULL, NULL, '2026-08-02T10:00:00+00:00', 1)`,
		`INSERT INTO metric_values VALUES ('a1', 'train/ppo_kl', '"all"', '{"rel_down":1,"rel_up":1}', 0, 0.5)`,
		`INSERT INTO metric_values VALUES ('a2', 'train/ppo_kl', '"all"', '{"rel_down":1,"rel_up":1}', 0, 0.25)`,
	} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	s, err := history.OpenMetrics(ctx, path, true)
	if err != nil {
		t.Fatal(err)
	}
	id := metricgate.Identity{TestPath: "t.py", Backend: "cuda", Suite: "s"}
	if got, err := s.Recent(ctx, id, coord("train/ppo_kl", 0), 20); err != nil || !slices.Equal(got, []float64{0.25, 0.5}) {
		t.Errorf("wanted Miles' rows newest first [0.25 0.5], got %v %v", got, err)
	}
	if _, err := s.WriteRun(ctx, history.MetricRun{Identity: id, CreatedAt: time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC), Trusted: true,
		Values: []metricgate.Sample{{Coordinate: coord("train/ppo_kl", 0), Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, _ = sql.Open("sqlite", path)
	defer raw.Close()
	var mode, created string
	raw.QueryRow("PRAGMA journal_mode").Scan(&mode)
	raw.QueryRow("SELECT created_at FROM runs ORDER BY created_at DESC LIMIT 1").Scan(&created)
	if mode != "delete" || created != "2026-08-03T00:00:00+00:00" {
		t.Errorf("wanted the journal left as Miles' store keeps it and Python's isoformat, got %q and %q", mode, created)
	}
}

// TestMetricStoreRefuses: a reader never creates a file, a symlink and a
// database without the tables are refused with what to do, and a password
// never shows in an error.
func TestMetricStoreRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.db")
	if _, err := history.OpenMetrics(ctx, missing, false); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("wanted a missing file refused for reading, got %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Error("a reader created the file")
	}
	runtime := filepath.Join(dir, "runtime.db")
	if _, err := history.Init(ctx, runtime); err != nil {
		t.Fatal(err)
	}
	if _, err := history.OpenMetrics(ctx, runtime, false); err == nil || !strings.Contains(err.Error(), "no usable tables runs and metric_values") {
		t.Errorf("wanted a database without the tables named, got %v", err)
	}
	link := filepath.Join(dir, "link.db")
	os.Symlink(runtime, link)
	if _, err := history.OpenMetrics(ctx, link, true); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("wanted a symlink refused, got %v", err)
	}
	db, _ := historytest.SilentServer(t)
	defer history.SetDeadlines(300*time.Millisecond, 300*time.Millisecond)()
	if _, err := history.OpenMetrics(ctx, db, false); !errors.Is(err, history.ErrStalled) || strings.Contains(err.Error(), historytest.SilentPassword) || !strings.Contains(err.Error(), "the metric history") {
		t.Errorf("wanted the stall of the metric history named without the password, got %v", err)
	}
}

// TestMetricStoreURLThatDoesNotParse: a gate store's URL that does not
// parse is named without its password, and the message names the gate's
// variable too, not only the runtime history's.
func TestMetricStoreURLThatDoesNotParse(t *testing.T) {
	_, err := history.OpenMetrics(context.Background(), "postgres://u:pw-SECRET@[::1", false)
	if err == nil || strings.Contains(err.Error(), "pw-SECRET") || !strings.Contains(err.Error(), history.EnvGateDB) {
		t.Errorf("wanted the URL refused naming %s and not its password, got %v", history.EnvGateDB, err)
	}
	for _, url := range []string{"postgres://u:pw-SECRET@h:99999/x", "postgres://u:pw-SECRET@h/x?sslmode=bogus"} {
		_, err := history.OpenMetrics(context.Background(), url, false)
		if err == nil || strings.Contains(err.Error(), "pw-SECRET") || !strings.Contains(err.Error(), "does not parse") {
			t.Errorf("%s: wanted the URL said not to parse, without its password, got %v", url, err)
		}
	}
}
