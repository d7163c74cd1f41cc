package engine

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeCLI puts a dagger CLI that runs script (sh) where Connect finds it,
// with the graces of a session's end made short.
func fakeCLI(t *testing.T, script string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dagger")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("_EXPERIMENTAL_DAGGER_CLI_BIN", bin)
	t.Setenv("_EXPERIMENTAL_DAGGER_RUNNER_HOST", "")
	grace, term := closeGrace, termGrace
	closeGrace, termGrace = 200*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { closeGrace, termGrace = grace, term })
}

// gone reports whether process pid has ended (absent, or a zombie no one
// reaped yet) within 1 s: a SIGKILL is delivered, not waited for.
func gone(pid int) bool {
	for range 50 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if _, after, _ := strings.Cut(string(stat), ") "); err != nil || strings.HasPrefix(after, "Z") {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// pids reads the pids a fake session wrote to file, one a line.
func pids(t *testing.T, file string) []int {
	t.Helper()
	var out []int
	for range 50 {
		data, _ := os.ReadFile(file)
		out = nil
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
		if len(out) >= 2 {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the fake session wrote no pids to %s", file)
	return nil
}

// TestConnectRefusedAtOnce: an engine address that refuses the connection
// or has no socket is down at once, and no dagger session is started (the
// CLI would retry it for minutes).
func TestConnectRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	fakeCLI(t, "touch "+ran+"; sleep 30")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "tcp://" + l.Addr().String()
	l.Close()
	for _, c := range []struct{ host, want string }{
		{refused, "connection refused"},
		{"unix://" + filepath.Join(dir, "no.sock"), "no such file or directory"},
	} {
		start := time.Now()
		_, err := Connect(context.Background(), Inputs{Repo: dir, RunnerHost: c.host}, nil)
		took := time.Since(start)
		want := "connecting to a Dagger engine: " + c.host + " takes no connection: "
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: wanted %q ... %q, got %v", c.host, want, c.want, err)
		}
		if took > time.Second {
			t.Errorf("%s: marked down after %s, wanted at once", c.host, took)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("a dagger session was started for an engine that refused the connection")
	}
}

// TestConnectSessionFailsFast: a dagger session that exits at once (no such
// engine) is an error naming what it said.
func TestConnectSessionFailsFast(t *testing.T) {
	fakeCLI(t, `echo "Error: no such engine container: $_EXPERIMENTAL_DAGGER_RUNNER_HOST" >&2; exit 1`)
	for range 5 { // what it said is read before the error, every time
		_, err := Connect(context.Background(), Inputs{Repo: t.TempDir(), RunnerHost: "docker-container://no-such-engine"}, nil)
		want := "connecting to a Dagger engine: the dagger session ended before it connected (exit status 1): Error: no such engine container: docker-container://no-such-engine; the engine at"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("wanted %q, got %v", want, err)
		}
	}
}

// TestConnectCancelledStopsTheSession: a session that still connects
// ignores its stdin and SIGTERM (as the dagger CLI does while it connects);
// cancelling the connection ends it and its process group within the
// graces, and Connect returns.
func TestConnectCancelledStopsTheSession(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pids")
	fakeCLI(t, `trap '' TERM INT; sleep 30 & echo $$ $! >`+file+`; wait`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Connect(ctx, Inputs{Repo: t.TempDir(), RunnerHost: "docker-container://slow"}, nil)
		done <- err
	}()
	ps := pids(t, file)
	cancel()
	start := time.Now()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("wanted the cancelled connection's error, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Connect did not return within 5 s of its cancellation")
	}
	if took := time.Since(start); took > closeGrace+termGrace+time.Second {
		t.Errorf("the session took %s to end, more than its graces (%s + %s)", took, closeGrace, termGrace)
	}
	for _, pid := range ps {
		if !gone(pid) {
			t.Errorf("process %d of the session outlived it", pid)
		}
	}
}

// TestSessionCloseAndCheck: a connected session that ignores SIGTERM is
// stopped by Close within the graces; Check says the engine does not answer
// while the session runs but the engine is gone, and names the session's
// end once it ended.
func TestSessionCloseAndCheck(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // the session's endpoint answers nothing
	file := filepath.Join(t.TempDir(), "pids")
	fakeCLI(t, fmt.Sprintf(`trap '' TERM INT; echo '{"port": %d, "session_token": "t"}'; sleep 30 & echo $$ $! >%s; wait`, port, file))
	s, err := Connect(context.Background(), Inputs{Repo: t.TempDir(), RunnerHost: "docker-container://x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ps := pids(t, file)
	if err := s.Check(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "its engine does not answer: ") {
		t.Errorf("wanted the engine not to answer, got %v", err)
	}
	start := time.Now()
	s.Close()
	if took := time.Since(start); took > closeGrace+termGrace+time.Second {
		t.Errorf("Close took %s, more than the graces (%s + %s)", took, closeGrace, termGrace)
	}
	for _, pid := range ps {
		if !gone(pid) {
			t.Errorf("process %d of the session outlived Close", pid)
		}
	}
	if err := s.Check(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "its dagger session ended (signal: killed)") {
		t.Errorf("wanted the session's end named, got %v", err)
	}
	s.Close() // a second Close waits for nothing
	var none *Session
	if err := none.Close(); err != nil {
		t.Errorf("a session that never opened: wanted nothing to close, got %v", err)
	}
}

// TestCheckDeadEngineAtOnce: an engine at a unix:// address that died (its
// socket takes no connection) is down at once, though the session's own
// endpoint takes the question and never answers it (Check would wait
// CheckTimeout for the engine's answer).
func TestCheckDeadEngineAtOnce(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "engine.sock")
	engineL, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	silent, err := net.Listen("tcp", "127.0.0.1:0") // takes connections, answers nothing
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	port := silent.Addr().(*net.TCPAddr).Port
	fakeCLI(t, fmt.Sprintf(`echo '{"port": %d, "session_token": "t"}'; exec sleep 30`, port))
	s, err := Connect(context.Background(), Inputs{Repo: dir, RunnerHost: "unix://" + sock}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	engineL.Close() // the engine dies: its socket goes
	start := time.Now()
	err = s.Check(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "unix://"+sock+" takes no connection: ") {
		t.Errorf("wanted the dead engine's address named, got %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Check took %s to find the engine dead, wanted at once", took)
	}
}
