package report

import (
	"fmt"

	"github.com/radixark/miles-ci/internal/plural"
)

// Failed reports whether a file's outcome is a failure of its own: it
// failed or timed out. A not-run file never started, so it is never the
// file that failed.
func (t TestResult) Failed() bool { return t.Status == Fail || t.Status == Timeout }

// FirstFailed is the first planned file that failed or timed out, in plan
// order; ok is false when none did (a run that ended before any file had
// an outcome, or an inconsistent one).
func (s Summary) FirstFailed() (t TestResult, ok bool) {
	for _, t := range s.Tests {
		if t.Failed() {
			return t, true
		}
	}
	return TestResult{}, false
}

// NotRun are the planned files the run never started, in plan order.
func (s Summary) NotRun() []string {
	var out []string
	for _, t := range s.Tests {
		if t.Status == NotRun {
			out = append(out, t.File)
		}
	}
	return out
}

// NotRunWhy says why the not-run files never started: the run stopped
// after the last file that failed or timed out (the runner stops at a
// failure unless it continues on error, and a run's timeout ends it while a
// file runs), or, when none did, how the runner ended before them.
func (s Summary) NotRunWhy() string {
	var last *TestResult
	for i, t := range s.Tests {
		if t.Failed() {
			last = &s.Tests[i]
		}
	}
	switch {
	case last != nil && last.Status == Timeout:
		return "the run stopped after " + Printable(last.File) + " timed out"
	case last != nil:
		return "the run stopped after " + Printable(last.File) + " failed"
	case s.Verdict == Passed:
		return "the runner passed without them"
	case s.Signal != nil:
		return fmt.Sprintf("the runner was killed by signal %d before they started", *s.Signal)
	}
	return fmt.Sprintf("the runner exited with code %d before they started", s.ExitCode)
}

// NotRunLine is one line on the files a failed run never started, or ""
// when it started them all: "3 files never started: the run stopped after
// tests/fast/test_x.py failed".
func (s Summary) NotRunLine() string {
	n := len(s.NotRun())
	if n == 0 {
		return ""
	}
	return plural.N(n, "file") + " never started: " + s.NotRunWhy()
}
