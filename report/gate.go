package report

import (
	"fmt"

	"github.com/radixark/miles-ci/metricgate"
)

// GateSummary is summary.json's gate: the metric-history gate's verdicts of
// a CUDA stage run's passing files (rules §16). They never change the run's
// verdict or exit status.
type GateSummary struct {
	// Form is the checkout's gate form (metricgate.Form.Name).
	Form string `json:"form"`
	// Store names the history the files were judged against, without a
	// password; "" is none (every coordinate a cold start).
	Store string `json:"store"`
	// WritesBaseline is set for a nightly or weekly run: with a store, each
	// judged file is stored as the next baseline after the results.
	WritesBaseline bool `json:"writes_baseline"`
	// Provenance is what a stored run records of where it came from: the
	// run's GitHub facts as the container had them.
	Provenance metricgate.Provenance `json:"provenance"`
	// Files are the passing files' verdicts, in plan order.
	Files []GateFile `json:"files"`
	// Error says why the gate could not judge the run at all (the
	// checkout's gate unreadable).
	Error string `json:"error,omitempty"`
}

// GateFile is one judged file: its verdict, as `miles-ci gate --json`
// gives it, and its record in the results folder.
type GateFile struct {
	metricgate.FileVerdict
	// Record is the results folder's copy of the merged record judged
	// (RecordFile), "" when there was none.
	Record string `json:"record,omitempty"`
}

// RecordFile is the results folder's name of a file's merged record.
func RecordFile(key string) string { return "gate/" + key + ".jsonl" }

// lines are the gate's lines of Summary.Text: one a judged file.
func (g *GateSummary) lines() []string {
	if g == nil {
		return nil
	}
	p := Printable
	if g.Error != "" {
		return []string{"  gate     " + p(g.Error)}
	}
	var out []string
	for _, v := range g.Files {
		out = append(out, fmt.Sprintf("  gate     %s: %s", p(v.TestPath), p(v.Summary())))
	}
	return out
}
