package history_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/history/historytest"
	"github.com/radixark/miles-ci/report"
)

// stores are the back ends under test (historytest.DBs), opened.
func stores(t *testing.T) map[string]func(t *testing.T) history.Store {
	out := map[string]func(t *testing.T) history.Store{}
	for name, db := range historytest.DBs(t) {
		out[name] = func(t *testing.T) history.Store {
			s, err := history.Open(context.Background(), db(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	}
	return out
}

func batch(run int64, attempts ...history.Attempt) history.Batch {
	return history.Batch{Provenance: history.Provenance{CommitSHA: "deadbeef", RunID: run, RunAttempt: 2, Event: "schedule", Ref: "refs/heads/main"},
		Attempts: attempts, RecordedAt: time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)}
}

func attempt(status string, n int, elapsed float64) history.Attempt {
	return history.Attempt{TestPath: "tests/e2e/test_x.py", Backend: "CUDA", Suite: "stage-c-8-gpu-h100", TestAttempt: n, Status: status, ElapsedS: elapsed, EstimatedS: 20}
}

func TestWrite(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			b := batch(123, attempt(history.Fail, 1, 12.5), attempt(history.Pass, 2, 10), attempt(history.Pass, 2, 10))
			if err := s.Write(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, b); err != nil {
				t.Fatalf("a replay must be a no-op, got %v", err)
			}
			rows, err := s.Rows(ctx, time.Time{}, time.Time{})
			if err != nil || len(rows) != 2 {
				t.Fatalf("wanted 2 rows, got %d (%v)", len(rows), err)
			}
			if rows[0].Status != history.Fail || rows[1].Status != history.Pass || !rows[0].RecordedAt.Equal(b.RecordedAt) || rows[0].RunAttempt != 2 || rows[0].Ref != "refs/heads/main" {
				t.Errorf("wanted the batch's rows, got %+v", rows)
			}
			// A different payload for one key fails the whole batch.
			conflict := batch(123, attempt(history.Pass, 3, 9), attempt(history.Pass, 2, 11))
			err = s.Write(ctx, conflict)
			var ce *history.ConflictError
			if !errors.As(err, &ce) || ce.Key.TestAttempt != 2 {
				t.Fatalf("wanted a conflict on test attempt 2, got %v", err)
			}
			if rows, _ := s.Rows(ctx, time.Time{}, time.Time{}); len(rows) != 2 {
				t.Errorf("the failed batch wrote %d rows", len(rows)-2)
			}
			// So does a different commit.
			other := batch(123, attempt(history.Pass, 2, 10))
			other.CommitSHA = "cafe"
			if err := s.Write(ctx, other); !errors.As(err, &ce) {
				t.Errorf("wanted a conflict for another commit, got %v", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    history.Attempt
		err  string
	}{
		{"status", history.Attempt{Status: "SKIP", TestAttempt: 1, EstimatedS: 1}, `unsupported runtime status: "SKIP"`},
		{"elapsed", history.Attempt{Status: history.Pass, TestAttempt: 1, ElapsedS: -1, EstimatedS: 1}, "invalid elapsed_seconds"},
		{"estimate", history.Attempt{Status: history.Pass, TestAttempt: 1}, "invalid estimated_seconds"},
		{"attempt", history.Attempt{Status: history.Pass, EstimatedS: 1}, "invalid test_attempt"},
		// Issue 31: what one store took and the other refused, or what
		// overflowed the calibration, is refused where it enters.
		{"NaN", history.Attempt{Status: history.Pass, TestAttempt: 1, ElapsedS: math.NaN(), EstimatedS: 1}, "invalid elapsed_seconds of : elapsed_seconds is NaN"},
		{"Infinity", history.Attempt{Status: history.Pass, TestAttempt: 1, ElapsedS: math.Inf(1), EstimatedS: 1}, "elapsed_seconds is +Inf"},
		{"1e308", history.Attempt{Status: history.Pass, TestAttempt: 1, ElapsedS: 1e308, EstimatedS: 1}, "more than 432000"},
		{"huge estimate", history.Attempt{Status: history.Pass, TestAttempt: 1, EstimatedS: 1e308}, "invalid estimated_seconds"},
		{"NUL", history.Attempt{TestPath: "tests/a\x00.py", Status: history.Pass, TestAttempt: 1, EstimatedS: 1}, "NUL character"},
		{"not UTF-8", history.Attempt{Suite: "stage-\xff", Status: history.Pass, TestAttempt: 1, EstimatedS: 1}, "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := batch(1, tc.a).Validate()
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("wanted %q, got %v", tc.err, err)
			}
		})
	}
	b := batch(1, attempt(history.Pass, 1, 1))
	b.Ref = "refs/heads/\x00"
	if _, err := b.Validate(); err == nil || !strings.Contains(err.Error(), "invalid git_ref") {
		t.Errorf("wanted a NUL in the provenance refused, got %v", err)
	}
	if _, err := batch(1, attempt(history.Pass, 1, 1), attempt(history.Fail, 1, 1)).Validate(); err == nil || !strings.Contains(err.Error(), "conflicting runtime attempts for idempotency key") {
		t.Errorf("wanted the in-batch conflict, got %v", err)
	}
}

func TestSamples(t *testing.T) {
	ctx := context.Background()
	day := func(d int) time.Time { return time.Date(2026, 7, 22, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			write := func(run int64, at time.Time, event, ref string, attempts ...history.Attempt) {
				b := batch(run, attempts...)
				b.RunAttempt, b.RecordedAt, b.Event, b.Ref = 1, at, event, ref
				if err := s.Write(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			write(1, day(0), "schedule", "refs/heads/main", attempt(history.Pass, 1, 10))       // the window's first instant
			write(2, day(21), "schedule", "refs/heads/main", attempt(history.Pass, 1, 99))      // its end, excluded
			write(3, day(1), "pull_request", "refs/pull/1/merge", attempt(history.Pass, 1, 98)) // not scheduled
			write(4, day(1), "schedule", "refs/heads/release", attempt(history.Pass, 1, 97))    // not main
			write(5, day(2), "schedule", "refs/heads/main", attempt(history.Fail, 1, 96), attempt(history.Pass, 2, 20))
			write(6, day(2), "local", "local", attempt(history.Pass, 1, 95))
			got, err := s.Samples(ctx, history.SampleQuery{From: day(0), Before: day(21), Events: []string{"schedule"}, Ref: "refs/heads/main", Limit: 15})
			if err != nil {
				t.Fatal(err)
			}
			var seen []float64
			for _, g := range got {
				seen = append(seen, g.ElapsedS)
			}
			if len(seen) != 2 || seen[0] != 20 || seen[1] != 10 {
				t.Errorf("wanted [20 10], got %v", seen)
			}
			got, _ = s.Samples(ctx, history.SampleQuery{From: day(0), Before: day(21), Events: []string{"schedule", "local"}, Ref: "refs/heads/main", Limit: 2})
			if len(got) != 2 || got[0].ElapsedS != 95 || got[1].ElapsedS != 20 {
				t.Errorf("wanted the local sample first and a limit of 2, got %+v", got)
			}
		})
	}
}

// TestReadSkipsInvalidRows: rows that break the attempt rule, written past
// miles-ci (Postgres' CHECK lets NaN and Infinity through; SQLite takes a
// NUL), are left out of every read with a warning, and the calibration
// ranks only valid samples (issue 31).
func TestReadSkipsInvalidRows(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for name, newDB := range historytest.DBs(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			bad := []float64{1e308, math.Inf(1), 1e308}
			if name == "postgres" {
				bad = append(bad, math.NaN())
			}
			for i, e := range bad { // the newest rows, so they would rank first
				historytest.InsertRaw(t, db, "tests/e2e/test_x.py", e, int64(100+i), at.Add(time.Hour))
			}
			for i, e := range []float64{30, 40, 50} {
				historytest.InsertRaw(t, db, "tests/e2e/test_x.py", e, int64(i+1), at)
			}
			nul := 0
			if name == "sqlite" { // Postgres refuses it already
				historytest.InsertRaw(t, db, "tests/e2e/test_\x00.py", 5, 200, at)
				nul = 1
			}
			s, err := history.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			samples, err := s.Samples(ctx, history.SampleQuery{From: at.AddDate(0, 0, -1), Before: at.AddDate(0, 0, 1), Events: []string{"schedule"}, Ref: "refs/heads/main", Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			var got []float64
			for _, smp := range samples {
				got = append(got, smp.ElapsedS)
			}
			if name == "sqlite" && !strings.Contains(strings.Join(s.Skipped(), ""), "NUL character") {
				t.Errorf("wanted the NUL row named, got %q", s.Skipped())
			}
			if len(got) != 3 || got[0]+got[1]+got[2] != 120 {
				t.Errorf("wanted the 3 valid samples, got %v", got)
			}
			rows, err := s.Rows(ctx, time.Time{}, time.Time{})
			if err != nil || len(rows) != 3 {
				t.Errorf("wanted the 3 valid rows, got %d (%v)", len(rows), err)
			}
			skipped := strings.Join(s.Skipped(), "\n")
			for _, want := range []string{fmt.Sprintf("%d PASS row(s) in the window have an elapsed_seconds that is not a number", len(bad)),
				fmt.Sprintf("skipped %d row(s) that break the attempt rule", len(bad)+nul)} {
				if !strings.Contains(skipped, want) {
					t.Errorf("wanted %q in the warnings, got\n%s", want, skipped)
				}
			}
		})
	}
}

func TestOpenRefusesAForeignDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec("CREATE TABLE other (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	_, err = history.Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "has no usable table ci_test_runtime_attempts") {
		t.Fatalf("wanted the missing-table error, got %v", err)
	}
	if _, err := history.Init(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Init(context.Background(), path); !errors.Is(err, history.ErrTableExists) {
		t.Errorf("wanted history.ErrTableExists, got %v", err)
	}
	s, err := history.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestSQLitePathsArePaths: a SQLite --db is a file path (issue 31: "#" and
// "?" were read as URI syntax, q#frag.db wrote to q), a symlink is named and
// not followed, an empty file is never rewritten (only history init fills
// it), and a read never creates a file.
func TestSQLitePathsArePaths(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"q#frag.db", "q?mode=memory.db", "100%25.db"} {
		path := filepath.Join(dir, name)
		s, err := history.Open(ctx, path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s.Close()
		if _, err := os.Stat(path); err != nil {
			t.Errorf("wanted %s itself created: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "q")); err == nil {
		t.Errorf("wanted no file q")
	}

	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	link := filepath.Join(dir, "link.db")
	os.Symlink(empty, link)
	missing := filepath.Join(dir, "missing.db")
	for _, tc := range []struct {
		path, want string
		open       func(context.Context, string) (history.Store, error)
	}{
		{empty, "is an empty file, not a SQLite database", history.Open},
		{empty, "is an empty file, not a SQLite database", history.OpenRead},
		{link, "is a symlink to " + empty, history.Open},
		{link, "is a symlink to " + empty, history.OpenRead},
		{missing, "does not exist; record a run first", history.OpenRead},
	} {
		if _, err := tc.open(ctx, tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: wanted %q, got %v", tc.path, tc.want, err)
		}
	}
	if info, _ := os.Stat(empty); info.Size() != 0 {
		t.Errorf("wanted the empty file left empty, it holds %d bytes", info.Size())
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("wanted a read to create nothing")
	}
	if _, err := history.Init(ctx, empty); err != nil {
		t.Errorf("wanted history init to fill an empty file, got %v", err)
	}
}

// TestKeywordConnectionStringIsRefused: a libpq key=value connection
// string is neither created as a SQLite file named after its password nor
// shown, in the runtime history and in the metric history.
func TestKeywordConnectionStringIsRefused(t *testing.T) {
	ctx := context.Background()
	t.Chdir(t.TempDir())
	dsn := "host=127.0.0.1 port=1 password=pw-SECRET"
	_, err1 := history.Open(ctx, dsn)
	_, err2 := history.OpenMetrics(ctx, dsn, true)
	err3 := history.InitMetrics(ctx, dsn)
	for _, err := range []error{err1, err2, err3} {
		if err == nil || !strings.Contains(err.Error(), "key=value connection string") || strings.Contains(err.Error(), "pw-SECRET") {
			t.Errorf("wanted the connection string refused and not shown, got %v", err)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("wanted no file created, got %v", entries)
	}
}

func TestPasswordIsMasked(t *testing.T) {
	url := "postgres://ci:s3cr%21t@127.0.0.1:1/miles?connect_timeout=1"
	_, err := history.Open(context.Background(), url)
	if err == nil || strings.Contains(err.Error(), "s3cr") {
		t.Errorf("wanted an error without the password, got %v", err)
	}
	if history.Redact(url) != "postgres://ci:xxxxx@127.0.0.1:1/miles?connect_timeout=1" || !history.HasPassword(url) {
		t.Errorf("got %q", history.Redact(url))
	}
}

func TestAttemptsOf(t *testing.T) {
	s := report.Summary{HW: "cuda", Suite: "stage-c-8-gpu-h100", Verdict: report.Failed, Tests: []report.TestResult{
		{File: "tests/e2e/a.py", Status: report.Pass, Attempts: 2, ElapsedS: 30, EstTime: 60,
			Tries: []report.Try{{Status: report.Fail, ElapsedS: 10}, {Status: report.Pass, ElapsedS: 20}}},
		{File: "tests/e2e/b.py", Status: report.Timeout, Attempts: 1, ElapsedS: 75},
		{File: "tests/e2e/c.py", Status: report.NotRun},
	}}
	got, notes := history.AttemptsOf(s, func(f string) float64 { return map[string]float64{"tests/e2e/b.py": 60}[f] })
	if len(got) != 3 || got[0].Status != history.Fail || got[1].TestAttempt != 2 || got[1].ElapsedS != 20 || got[2].Status != history.Timeout || got[2].Backend != "CUDA" || len(notes) != 0 {
		t.Errorf("got %+v %v", got, notes)
	}
	s.Verdict = report.Inconsistent
	if got, _ := history.AttemptsOf(s, nil); len(got) != 0 {
		t.Errorf("an inconsistent run gave %+v", got)
	}
}
