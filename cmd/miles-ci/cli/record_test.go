package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history/historytest"
)

// TestCIRecordSilentStore: a store that accepts the connection and never
// answers costs ci --record at most its recording deadline after the graph
// (issue 31: it hung forever); the verdict is printed first, the exit
// status is the verdict's, the rows are kept and the warning says where.
// A signal during that recording ends it at once, the verdict already out.
func TestCIRecordSilentStore(t *testing.T) {
	fakeCIEngine(t, nil)
	db, accepted := historytest.SilentServer(t)
	defer func(old time.Duration) { recordTimeout = old }(recordTimeout)
	recordTimeout = time.Second
	dir := t.TempDir()
	args := func(results string) []string {
		return []string{"ci", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
			"--gpus", "none", "--quiet", "--only", "cpu", "--results", results, "--record"}
	}
	start := time.Now()
	results := filepath.Join(dir, "r1")
	code, stdout, stderr := runCLI(t, map[string]string{"MILES_CI_HISTORY_DB": db}, args(results)...)
	if code != 0 || !strings.Contains(stdout, "results: "+results) || strings.Contains(stderr, historytest.SilentPassword) ||
		!strings.Contains(stderr, "runtime history write failed (the run's result stands): stage-a-cpu/1-of-4: ") ||
		!strings.Contains(stderr, "no answer in time (the deadline of the whole recording passed)") {
		t.Errorf("wanted exit 0, the results and a masked warning naming the stall, got %d\n%s\n%s", code, stdout, stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("wanted the run to end about a second after its graph, it took %s", d)
	}
	if _, err := os.Stat(filepath.Join(results, "stage-a-cpu", "1-of-4", "history-rows.json")); err != nil {
		t.Errorf("wanted the rows kept beside the results: %v", err)
	}

	// The run reads the history first (it gives up on the silent store and
	// orders by est_time): the signal comes at the recording's connection.
	recordTimeout = time.Hour
	db, accepted = historytest.SilentServerAt(t, 2)
	signalled := make(chan time.Time, 1)
	go func() {
		<-accepted
		signalled <- time.Now()
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}()
	code, stdout, stderr = runCLI(t, map[string]string{"MILES_CI_HISTORY_DB": db}, args(filepath.Join(dir, "r2"))...)
	if code != 0 || !strings.Contains(stdout, "dependency layers:") || !strings.Contains(stderr, "runtime history write failed (the run's result stands)") ||
		!strings.Contains(stderr, "interrupted before it answered") {
		t.Errorf("wanted exit 0 (the verdict's), the graph printed and the recording interrupted, got %d\n%s\n%s", code, stdout, stderr)
	}
	select {
	case at := <-signalled:
		if d := time.Since(at); d > 5*time.Second {
			t.Errorf("wanted a signal to end the recording at once, it took %s", d)
		}
	default:
		t.Error("wanted the recording to connect to the store")
	}
}

// TestSecondSignalExits: the first SIGINT or SIGTERM cancels a command's
// context; the second ends the process at once, whatever still runs.
func TestSecondSignalExits(t *testing.T) {
	exited := make(chan int, 1)
	defer func(old func(int)) { exitNow = old }(exitNow)
	exitNow = func(code int) { exited <- code }
	var errs strings.Builder
	ctx, stop := signalContext(Env{Stderr: &errs})
	defer stop()
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("wanted the first signal to cancel the context")
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case code := <-exited:
		if code != ExitInterrupted {
			t.Errorf("wanted exit %d, got %d", ExitInterrupted, code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wanted the second signal to end the process")
	}
	if !strings.Contains(errs.String(), "a second signal (interrupt): exiting now") {
		t.Errorf("wanted the exit said, got %q", errs.String())
	}
}

// TestHistoryCommandsStopOnASignal: the history commands that read or write
// a store end at a signal when the store never answers (issue 31: only
// SIGKILL ended them).
func TestHistoryCommandsStopOnASignal(t *testing.T) {
	results := t.TempDir()
	os.WriteFile(filepath.Join(results, "history-rows.json"), []byte(`{"commit_sha":"a","github_run_id":1,"github_run_attempt":1,"event_name":"local","git_ref":"local","attempts":[],"recorded_at":"2026-01-01T00:00:00Z"}`), 0o644)
	for _, args := range [][]string{
		{"history", "flaky"},
		{"history", "import", "--results", results},
		{"history", "init"},
		{"est-time", "--repo", milesRepo(), "--dry-run"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			db, accepted := historytest.SilentServer(t)
			go func() {
				<-accepted
				syscall.Kill(os.Getpid(), syscall.SIGINT)
			}()
			start := time.Now()
			code, _, stderr := runCLI(t, map[string]string{"MILES_CI_HISTORY_DB": db}, args...)
			if code != 1 || !strings.Contains(stderr, "interrupted before it answered") {
				t.Errorf("wanted exit 1 and the interruption named, got %d\n%s", code, stderr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("wanted the signal to end it at once, it took %s", d)
			}
		})
	}
}
