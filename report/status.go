// Package report reads what a stage run leaves behind (the per-file status
// lines of run_suite.py, pytest's JUnit XML, the in-container plan) and
// writes the results miles-ci hands back: summary.json, junit.xml and a
// readable summary. It is plain data: no Dagger, no files, no clock.
package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
)

// Status is a test file's outcome.
type Status string

// The outcomes of a test file.
const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Timeout Status = "timeout"
	// NotRun is a planned file the run never started (a fail-fast stop, or a
	// run that ended early).
	NotRun Status = "not-run"
)

// StatusLine is one per-file line run_suite.py prints with GITHUB_ACTIONS=true:
//
//	[i/n] FILE  PASS|FAIL|TIMEOUT  elapsed=Ns [exit=N] [timeout_after=Ns] [retry_of=attempt=N]
//
// A retried file prints one line per attempt.
type StatusLine struct {
	// Index and Total are i and n: the file's 1-based position in the shard.
	Index, Total int
	// File is the repo-relative test file.
	File string
	// Status is pass, fail or timeout.
	Status Status
	// ElapsedS is the attempt's whole seconds.
	ElapsedS int
	// Exit is the exit status of a failed attempt, nil otherwise.
	Exit *int
	// TimeoutAfter is the timeout of a timed-out attempt, nil otherwise.
	TimeoutAfter *int
	// RetryOf is the attempt this one retried (0 for a first attempt).
	RetryOf int
}

var statusLine = lazyre.New(`^\[([0-9]+)/([0-9]+)\] (.+?)  (PASS|FAIL|TIMEOUT)  elapsed=([0-9]+)s(?: exit=(-?[0-9]+))?(?: timeout_after=([0-9]+)s)?(?: retry_of=attempt=([0-9]+))?$`)

// maxStatusBytes bounds the status lines read: a shard runs tens of files.
const maxStatusBytes = 4 << 20

// ParseStatusLines reads the per-file status lines out of a run log (or the
// status.log the run keeps of them). Lines that are not status lines are
// passed over: tests may print anything, and only full matches count.
func ParseStatusLines(log string) ([]StatusLine, error) {
	if len(log) > maxStatusBytes {
		return nil, fmt.Errorf("status lines: %d bytes, more than the %d a shard can print; is this the status log of a run?", len(log), maxStatusBytes)
	}
	var out []StatusLine
	for _, line := range strings.Split(log, "\n") {
		if s, ok := parseStatusLine(line); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// parseStatusLine reads one status line; ok is false for any other line.
func parseStatusLine(line string) (StatusLine, bool) {
	m := statusLine.FindStringSubmatch(strings.TrimSuffix(line, "\r"))
	if m == nil {
		return StatusLine{}, false
	}
	s := StatusLine{File: unescapeName(m[3]), Status: Status(strings.ToLower(m[4]))}
	var ok bool
	if s.Index, ok = atoi(m[1]); !ok {
		return StatusLine{}, false
	}
	if s.Total, ok = atoi(m[2]); !ok {
		return StatusLine{}, false
	}
	if s.ElapsedS, ok = atoi(m[5]); !ok {
		return StatusLine{}, false
	}
	if m[6] != "" {
		n, ok := atoi(m[6])
		if !ok {
			return StatusLine{}, false
		}
		s.Exit = &n
	}
	if m[7] != "" {
		n, ok := atoi(m[7])
		if !ok {
			return StatusLine{}, false
		}
		s.TimeoutAfter = &n
	}
	if m[8] != "" {
		if s.RetryOf, ok = atoi(m[8]); !ok {
			return StatusLine{}, false
		}
	}
	return s, true
}

// atoi reads a decimal that fits an int32, so sums of them cannot overflow.
func atoi(s string) (int, bool) {
	n, err := strconv.ParseInt(s, 10, 32)
	return int(n), err == nil
}

// unescapeName undoes the escaping of line breaks in a printed file name.
func unescapeName(s string) string {
	return strings.NewReplacer(`\r`, "\r", `\n`, "\n").Replace(s)
}

// Line renders a status line as run_suite.py prints it (for tests and stand-ins).
func (s StatusLine) Line() string {
	name := strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s.File)
	line := fmt.Sprintf("[%d/%d] %s  %s  elapsed=%ds", s.Index, s.Total, name, strings.ToUpper(string(s.Status)), s.ElapsedS)
	if s.Exit != nil {
		line += fmt.Sprintf(" exit=%d", *s.Exit)
	}
	if s.TimeoutAfter != nil {
		line += fmt.Sprintf(" timeout_after=%ds", *s.TimeoutAfter)
	}
	if s.RetryOf > 0 {
		line += fmt.Sprintf(" retry_of=attempt=%d", s.RetryOf)
	}
	return line
}
