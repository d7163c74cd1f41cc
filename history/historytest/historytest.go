// Package historytest gives tests a real history store of each back end:
// SQLite in a temporary folder always, and a fresh database on the Postgres
// server of MILES_CI_TEST_POSTGRES (hack/test.sh starts one with
// hack/postgres.sh), which CI must have. Only tests import it.
package historytest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history"
)

// EnvPostgres names the test Postgres server.
const EnvPostgres = "MILES_CI_TEST_POSTGRES"

// DBs are the back ends to test against, by name, each a function that
// makes an empty history with Miles' table and gives its --db. Without
// MILES_CI_TEST_POSTGRES only SQLite is there, and under CI=true that fails
// the test: CI must test the real Postgres.
func DBs(t testing.TB) map[string]func(t testing.TB) string {
	t.Helper()
	out := map[string]func(t testing.TB) string{
		"sqlite": func(t testing.TB) string {
			db := filepath.Join(t.TempDir(), "history.db")
			if _, err := history.Init(context.Background(), db); err != nil {
				t.Fatal(err)
			}
			return db
		},
	}
	server := os.Getenv(EnvPostgres)
	if server == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set in CI: hack/test.sh starts a PostgreSQL server (hack/postgres.sh) and sets it", EnvPostgres)
		}
		t.Logf("%s is not set: the Postgres back end is not tested (hack/test.sh sets it)", EnvPostgres)
		return out
	}
	out["postgres"] = func(t testing.TB) string { return freshPostgres(t, server) }
	return out
}

// freshPostgres makes a new database on the server with Miles' table
// (history.Init) and drops it when the test ends.
func freshPostgres(t testing.TB, server string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	b := make([]byte, 6)
	rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	if _, err := history.Init(ctx, u.String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if a, err := sql.Open("pgx", server); err == nil {
			a.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
			a.Close()
		}
	})
	return u.String()
}

// SilentServer accepts TCP connections and never answers them (the store
// that hung ci --record forever in issue 31); it gives a postgres:// URL
// with a password, to check that no error shows it, and a channel closed
// when the first connection is accepted.
func SilentServer(t testing.TB) (string, <-chan struct{}) {
	t.Helper()
	return SilentServerAt(t, 1)
}

// SilentServerAt is SilentServer whose channel is closed when it accepts
// its nth connection (a run reads the history before it records).
func SilentServerAt(t testing.TB, n int) (string, <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	accepted := make(chan struct{})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			if len(conns) == n {
				close(accepted)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "postgres://ci:" + SilentPassword + "@" + l.Addr().String() + "/miles", accepted
}

// SilentPassword is SilentServer's URL's password.
const SilentPassword = "hunter2hunter2"

// LockTable holds db's table locked against writers, as another session
// writing would (Postgres: LOCK TABLE ... IN EXCLUSIVE MODE, which readers
// pass; SQLite: BEGIN IMMEDIATE), until the returned function is called.
func LockTable(t testing.TB, db string) func() {
	t.Helper()
	driver, dsn, begin := "sqlite", db, "BEGIN IMMEDIATE"
	if history.IsPostgres(db) {
		driver, dsn, begin = "pgx", db, "BEGIN; LOCK TABLE "+history.Table+" IN EXCLUSIVE MODE"
	}
	conn, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetMaxOpenConns(1)
	if _, err := conn.Exec(begin); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	unlock := func() {
		once.Do(func() {
			conn.Exec("ROLLBACK")
			conn.Close()
		})
	}
	t.Cleanup(unlock)
	return unlock
}

// InsertRaw writes a PASS row of a scheduled main run straight into db's
// table, past miles-ci's checks, as another writer (or Postgres' CHECK,
// which lets NaN and Infinity through) could.
func InsertRaw(t testing.TB, db, testPath string, elapsed float64, run int64, at time.Time) {
	t.Helper()
	driver, ph, when := "sqlite", "?", any(at.UTC().Format("2006-01-02T15:04:05.000000Z"))
	if history.IsPostgres(db) {
		driver, ph, when = "pgx", "$", at
	}
	conn, err := sql.Open(driver, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var q []string
	for i := 1; i <= 6; i++ {
		q = append(q, ph+strconv.Itoa(i))
	}
	_, err = conn.Exec(`INSERT INTO `+history.Table+` (test_path, backend, suite, test_attempt, status, elapsed_seconds, estimated_seconds,
		commit_sha, github_run_id, github_run_attempt, event_name, git_ref, recorded_at)
		VALUES (`+q[0]+`, 'CUDA', 'stage-c-8-gpu-h100', 1, 'PASS', `+q[1]+`, 20, `+q[2]+`, `+q[3]+`, 1, `+q[4]+`, 'refs/heads/main', `+q[5]+`)`,
		testPath, elapsed, "deadbeef", run, "schedule", when)
	if err != nil {
		t.Fatal(err)
	}
}
