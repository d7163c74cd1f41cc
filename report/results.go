package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/radixark/miles-ci/internal/fsinput"
)

// MaxResultsSize bounds a summary.json; a suite of a few hundred files is a
// few tens of KiB.
const MaxResultsSize = 8 << 20

// validStatus reports whether s is an outcome a test run writes.
func validStatus(s Status) bool {
	switch s {
	case Pass, Fail, Timeout, NotRun:
		return true
	}
	return false
}

// ParseResults decodes and checks a summary.json; name is used in errors.
func ParseResults(name string, data []byte) (*Summary, error) {
	var r Summary
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s is not a test run's summary.json: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s holds more than one JSON value; it must be one summary.json object", name)
	}
	if r.Suite == "" {
		return nil, fmt.Errorf("%s names no suite; it must be the summary.json a test run wrote", name)
	}
	if r.Shard != nil && (r.Shard.Size < 1 || r.Shard.ID < 0 || r.Shard.ID >= r.Shard.Size) {
		return nil, fmt.Errorf("%s: shard %d of %d is not a shard; ids run from 0 to size-1", name, r.Shard.ID, r.Shard.Size)
	}
	for i, t := range r.Tests {
		if t.File == "" || !validStatus(t.Status) {
			return nil, fmt.Errorf("%s: test %d (%q) has status %q; a status is pass, fail, timeout or not-run", name, i+1, t.File, t.Status)
		}
	}
	if err := consistent(&r); err != nil {
		return nil, fmt.Errorf("%s is not consistent: %w; it is not the summary.json of a miles-ci run, or was edited", name, err)
	}
	return &r, nil
}

// consistent checks a summary's verdict against its own facts, so an edited
// or forged summary.json cannot read as a pass: passed is the verdict
// passed, which needs exit code 0, every planned file a pass and no
// inconsistency. A summary of an older miles-ci (no verdict) is read by
// its passed field with the same checks.
func consistent(r *Summary) error {
	switch r.Verdict {
	case "":
		if r.Passed {
			r.Verdict = Passed
		} else {
			r.Verdict = Failed
		}
	case Passed, Failed, TimedOutRun, Inconsistent:
	default:
		return fmt.Errorf("verdict %q is not passed, failed, timeout or inconsistent", r.Verdict)
	}
	if r.Passed != (r.Verdict == Passed) {
		return fmt.Errorf("passed is %t but the verdict is %s", r.Passed, r.Verdict)
	}
	if r.Verdict == Inconsistent && len(r.Inconsistent) == 0 {
		return fmt.Errorf("the verdict is inconsistent but no inconsistency is named")
	}
	if !r.Passed {
		return nil
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("it passed with exit code %d", r.ExitCode)
	}
	if len(r.Inconsistent) > 0 {
		return fmt.Errorf("it passed with inconsistencies")
	}
	for _, t := range r.Tests {
		if t.Status != Pass {
			return fmt.Errorf("it passed, but %s is %s", t.File, t.Status)
		}
	}
	return nil
}

// ReadResults reads DIR/summary.json, a regular file of at most
// MaxResultsSize bytes (read through fsinput, so a FIFO or device there fails
// at once).
func ReadResults(dir string) (*Summary, error) {
	s, _, err := ReadResultsData(dir)
	return s, err
}

// SummaryFile is a results folder's summary.json as it is read back:
// bounded, and never through a symbolic link (miles-ci writes none).
var SummaryFile = fsinput.Kind{Name: "a summary.json", Max: MaxResultsSize, NoLink: true}

// ReadResultsData is ReadResults, and the bytes it read (a ci run's record
// binds each shard's summary.json by their digest).
func ReadResultsData(dir string) (*Summary, []byte, error) {
	name := filepath.Join(dir, "summary.json")
	data, err := fsinput.ReadFile(name, SummaryFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--results: %w; give the results folder a test run wrote", err)
	}
	s, err := ParseResults(name, data)
	return s, data, err
}
