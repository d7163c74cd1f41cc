package report

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Ending is how the runner process ended, as miles-ci's run wrapper saw it
// with waitpid: the only account of the run a test cannot write.
type Ending string

// The endings of a run.
const (
	// Exited: the runner exited with ExitCode.
	Exited Ending = "exited"
	// Signaled: the runner was killed by Signal (e.g. 9 from the OOM killer).
	Signaled Ending = "signaled"
	// TimedOut: miles-ci's own timer ended the run after TimeoutS seconds;
	// nothing else makes a run (or a single file) TIMEOUT.
	TimedOut Ending = "timeout"
)

// RecordPrefix starts the record line the run wrapper writes last on its
// stderr, after every other process of the container is gone, so no test
// can write after it.
const RecordPrefix = "miles-ci-run-record "

// RunRecord is the run wrapper's record of one run: how the runner ended,
// how long it took, how much of its output was cut, and the lines of its
// output shaped like run_suite.py's status lines (kept apart, so that a
// flood of output cannot cut them).
type RunRecord struct {
	Ending   Ending  `json:"ending"`
	ExitCode int     `json:"exit_code"`
	Signal   int     `json:"signal"`
	TimeoutS int     `json:"timeout_s"`
	ElapsedS float64 `json:"elapsed_s"`
	// LogBytes is the size of the runner's whole output; LogCutBytes how
	// much of it the wrapper left out of run.log (the middle).
	LogBytes    int64 `json:"log_bytes"`
	LogCutBytes int64 `json:"log_cut_bytes"`
	// StatusLines are the output lines shaped like status lines, in order;
	// StatusDropped counts those beyond the wrapper's cap.
	StatusLines   []string `json:"status_lines"`
	StatusDropped int      `json:"status_dropped"`
	// With the plan given to the wrapper, StatusForeign counts the lines
	// shaped like status lines that name no planned file at its position
	// (test output, not kept), and StatusOverflow names the planned files
	// with more such lines than the wrapper keeps of one file (its first
	// and last few): a test printed them.
	StatusForeign  int      `json:"status_foreign"`
	StatusOverflow []string `json:"status_overflow"`
	// Leftovers counts the processes still alive when the runner ended,
	// which the wrapper killed.
	Leftovers int `json:"leftovers"`
	// Warnings are the wrapper's own (e.g. a ulimit it could not raise).
	Warnings []string `json:"warnings"`
	// Pytest is what miles-ci's pytest plugin reported through the
	// wrapper's channel (CPU stages); nil when the run had none.
	Pytest *PytestReport `json:"pytest"`
	// GateRecords are the metric gate's merged records (rules §16), each
	// kept when the runner printed its file's PASS line: data the tests
	// wrote, never read for the verdict.
	GateRecords []GateRecord `json:"gate_records"`
}

// GateRecord is the merged metric record of one passing attempt of a file,
// as the run wrapper read it (at most 1 MiB; 4 MiB in all).
type GateRecord struct {
	File    string `json:"file"`
	Attempt int    `json:"attempt"`
	// Record is the record's text; nil when none was read (Problem says why:
	// "missing", too large, not a regular file, not UTF-8).
	Record  *string `json:"record"`
	Problem string  `json:"problem"`
}

// PytestReport is what pytest told miles-ci's plugin as the run went: a
// channel outside /results that only the wrapper reads, so that what a test
// does after pytest reported (an atexit hook that writes an all-pass
// junit.xml and calls os._exit(0)) cannot take a report back.
type PytestReport struct {
	// Sessions counts the pytest sessions that started; ExitStatuses are
	// the exit statuses of those that finished, in order.
	Sessions     int   `json:"sessions"`
	ExitStatuses []int `json:"exit_statuses"`
	// Files are the test files pytest reported on (relative to the
	// workspace), each with whether any of its tests (or its collection)
	// failed.
	Files map[string]PytestFile `json:"files"`
	// BadLines counts lines of the channel that were not the plugin's;
	// Overflow is set when it carried more than the wrapper keeps.
	BadLines int  `json:"bad_lines"`
	Overflow bool `json:"overflow"`
}

// PytestFile is one test file's outcome as pytest reported it.
type PytestFile struct {
	Ran    bool `json:"ran"`
	Failed bool `json:"failed"`
}

// maxRecordBytes bounds the record line: the wrapper caps its status lines
// at 4096 lines of at most 1024 bytes.
const maxRecordBytes = 8 << 20

// ParseRecord finds the run wrapper's record: the last line of its stderr.
// Anything before it is ignored (a test that reaches the wrapper's stderr
// can only write before the wrapper's last line).
func ParseRecord(stderr string) (RunRecord, error) {
	stderr = strings.TrimRight(stderr, "\n")
	last := stderr[strings.LastIndexByte(stderr, '\n')+1:]
	body, ok := strings.CutPrefix(last, RecordPrefix)
	if !ok {
		return RunRecord{}, fmt.Errorf("the run wrapper left no record (its last line of stderr is %q); the wrapper did not finish, so the run cannot be read", clip(last, 200))
	}
	if len(body) > maxRecordBytes {
		return RunRecord{}, fmt.Errorf("the run wrapper's record is %d bytes, more than the %d it writes", len(body), maxRecordBytes)
	}
	var r RunRecord
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return RunRecord{}, fmt.Errorf("the run wrapper's record is not JSON: %w", err)
	}
	switch {
	case r.Ending == Exited && (r.ExitCode < 0 || r.ExitCode > 255):
		return RunRecord{}, fmt.Errorf("the run wrapper's record has exit code %d, outside 0-255", r.ExitCode)
	case r.Ending == Signaled && (r.Signal < 1 || r.Signal > 64):
		return RunRecord{}, fmt.Errorf("the run wrapper's record has signal %d, outside 1-64", r.Signal)
	case r.Ending == TimedOut && r.TimeoutS < 0:
		return RunRecord{}, fmt.Errorf("the run wrapper's record has timeout %d", r.TimeoutS)
	case r.Ending != Exited && r.Ending != Signaled && r.Ending != TimedOut:
		return RunRecord{}, fmt.Errorf("the run wrapper's record has ending %q; it is exited, signaled or timeout", r.Ending)
	}
	return r, nil
}

// WrapperExit is the exit status the wrapper gives the engine for this
// record: the runner's own status where the engine can carry it (Dagger's
// "any" return type takes 0-127 and 192-255), else 192. The engine's status
// must equal it, so a record forged into the wrapper's stderr cannot turn a
// failed run into a pass.
func (r RunRecord) WrapperExit() int {
	if r.Ending == Exited && (r.ExitCode < 128 || r.ExitCode > 191) {
		return r.ExitCode
	}
	return 192
}

// CheckEngine checks the engine's exit status of the run step against the record.
func (r RunRecord) CheckEngine(code int) error {
	if code != r.WrapperExit() {
		return fmt.Errorf("the engine recorded exit status %d for the run step, but its record says %s; the run cannot be trusted", code, r.describe())
	}
	return nil
}

// describe says how the runner ended, e.g. "exit 1", "killed by signal 9".
func (r RunRecord) describe() string {
	switch r.Ending {
	case Signaled:
		return fmt.Sprintf("killed by signal %d", r.Signal)
	case TimedOut:
		return fmt.Sprintf("timed out after %ds (miles-ci's timer)", r.TimeoutS)
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
