package history_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/history/historytest"
)

// TestSilentStoreEndsAtItsDeadline: opening a store that accepts the
// connection and never answers ends at the connect deadline, with an error
// that names the stall (and no password); a caller's deadline or a
// cancelled context (a signal) ends it sooner.
func TestSilentStoreEndsAtItsDeadline(t *testing.T) {
	db, _ := historytest.SilentServer(t)
	defer history.SetDeadlines(300*time.Millisecond, 300*time.Millisecond)()
	start := time.Now()
	_, err := history.Open(context.Background(), db)
	if !errors.Is(err, history.ErrStalled) || !strings.Contains(err.Error(), "none within 300ms") || strings.Contains(err.Error(), historytest.SilentPassword) {
		t.Errorf("wanted the stall named, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("wanted the open to end at its deadline, it took %s", d)
	}

	defer history.SetDeadlines(time.Hour, time.Hour)()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := history.Open(ctx, db); !errors.Is(err, history.ErrStalled) || !strings.Contains(err.Error(), "the deadline of the whole recording") {
		t.Errorf("wanted the caller's deadline named, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("wanted Open to end at the caller's deadline, it took %s", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if _, err := history.Init(ctx, db); !errors.Is(err, history.ErrInterrupted) {
		t.Errorf("wanted a cancelled Init to say it was interrupted, got %v", err)
	}
}

// TestStalledStatementEndsAtItsDeadline: a store that answers the
// connection but not a write (its table locked by another session) ends
// the write at the statement deadline, on each back end.
func TestStalledStatementEndsAtItsDeadline(t *testing.T) {
	for name, newDB := range historytest.DBs(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			defer history.SetDeadlines(10*time.Second, 500*time.Millisecond)()
			s, err := history.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			historytest.LockTable(t, db)
			start := time.Now()
			err = s.Write(context.Background(), batch(1, attempt(history.Pass, 1, 3)))
			if err == nil {
				t.Fatal("wanted the write to a locked table to fail")
			}
			if name == "postgres" && (!errors.Is(err, history.ErrStalled) || !strings.Contains(err.Error(), "none within 500ms")) {
				t.Errorf("wanted the stalled write named, got %v", err)
			}
			t.Logf("%s: %v", name, err)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("wanted the write to end at its deadline, it took %s", d)
			}
		})
	}
}

// TestStoreErrorsSayWhatTheyAre: a locked SQLite, an unreachable server, a
// database or a column that is missing are each named as what they are;
// only a missing table points at history init (issue 31: a locked or
// read-only database said "create it with history init").
func TestStoreErrorsSayWhatTheyAre(t *testing.T) {
	ctx := context.Background()
	db := historytest.DBs(t)["sqlite"](t)
	defer history.SetBusy(200 * time.Millisecond)()
	s, err := history.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	historytest.LockTable(t, db)
	if err := s.Write(ctx, batch(1, attempt(history.Pass, 1, 3))); err == nil || !strings.Contains(err.Error(), "is locked by another process") {
		t.Errorf("wanted the lock named, got %v", err)
	}
	for _, tc := range []struct{ db, want string }{
		{"postgres://ci@127.0.0.1:1/miles", "refused the connection (nothing listens there)"},
		{"postgres://ci@/miles?host=" + t.TempDir(), "cannot be reached"},
	} {
		if _, err := history.Open(ctx, tc.db); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "history init") {
			t.Errorf("%s: wanted %q, got %v", tc.db, tc.want, err)
		}
	}
	newPG, ok := historytest.DBs(t)["postgres"]
	if !ok {
		return
	}
	pg := newPG(t)
	u, _ := url.Parse(pg)
	u.Path = "/no_such_database"
	if _, err := history.Open(ctx, u.String()); err == nil || !strings.Contains(err.Error(), "names a database the server does not have") {
		t.Errorf("wanted the missing database named, got %v", err)
	}
	conn, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Exec("ALTER TABLE " + history.Table + " DROP COLUMN git_ref")
	if _, err := history.Open(ctx, pg); err == nil || !strings.Contains(err.Error(), "without a column of Miles' schema") {
		t.Errorf("wanted the missing column named, got %v", err)
	}
	conn.Exec("DROP TABLE " + history.Table)
	if _, err := history.Open(ctx, pg); err == nil || !strings.Contains(err.Error(), "create it with miles-ci history init") {
		t.Errorf("wanted history init for the missing table, got %v", err)
	}
}
