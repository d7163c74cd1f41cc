package actions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/policy"
)

// MaxResultsSize bounds a summary.json; a suite of a few hundred files is a
// few tens of KiB.
const MaxResultsSize = 8 << 20

// Results is a test run's results/summary.json, as `test` and
// `miles-ci run --results DIR` write it.
type Results struct {
	// HW is the backend: cpu, cuda or rocm.
	HW string `json:"hw"`
	// Suite is the suite (= stage) that ran.
	Suite string `json:"suite"`
	// Shard is the shard that ran, nil when the suite is not sharded.
	Shard *struct {
		ID   int `json:"id"`
		Size int `json:"size"`
	} `json:"shard"`
	// Cadence is the run's cadence.
	Cadence string `json:"cadence"`
	// Image is the container image ("" for cpu).
	Image string `json:"image"`
	// File is the test file of a single-file run ("" for a stage run).
	File string `json:"file,omitempty"`
	// ExitCode is the run's exit code.
	ExitCode int `json:"exit_code"`
	// Passed is true when the run succeeded.
	Passed bool `json:"passed"`
	// Tests are the files that were planned to run, in run order.
	Tests []TestResult `json:"tests"`
	// Skipped are the disabled files, with why.
	Skipped []policy.SkippedTest `json:"skipped"`
	// Notes say what the run found beside the files' outcomes.
	Notes []string `json:"notes,omitempty"`
}

// TestResult is one file's outcome.
type TestResult struct {
	File     string  `json:"file"`
	Status   string  `json:"status"`
	Attempts int     `json:"attempts"`
	ElapsedS float64 `json:"elapsed_s"`
	// ExitCode is nil when the file has none of its own: not run, timed
	// out, or a CPU file (one pytest runs the whole shard).
	ExitCode *int `json:"exit_code"`
	// TimeoutS is nil when the file has no timeout of its own (CPU stages).
	TimeoutS *float64 `json:"timeout_s"`
}

// The statuses a test file can end in.
var statuses = map[string]bool{"pass": true, "fail": true, "timeout": true, "not-run": true}

// ParseResults decodes and checks a summary.json; name is used in errors.
func ParseResults(name string, data []byte) (*Results, error) {
	var r Results
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
		if t.File == "" || !statuses[t.Status] {
			return nil, fmt.Errorf("%s: test %d (%q) has status %q; a status is pass, fail, timeout or not-run", name, i+1, t.File, t.Status)
		}
	}
	return &r, nil
}

// ReadResults reads DIR/summary.json, a regular file of at most
// MaxResultsSize bytes (read through fsinput, so a FIFO or device there fails
// at once).
func ReadResults(dir string) (*Results, error) {
	name := filepath.Join(dir, "summary.json")
	data, err := fsinput.ReadFile(name, fsinput.Kind{Name: "a summary.json", Max: MaxResultsSize})
	if err != nil {
		return nil, fmt.Errorf("--results: %w; give the results folder a test run wrote", err)
	}
	return ParseResults(name, data)
}
