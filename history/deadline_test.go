package history_test

import (
	"context"
	"errors"
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
	if err := history.Init(ctx, db); !errors.Is(err, history.ErrInterrupted) {
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
