package usecase

import (
	"errors"
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/report"
)

// ReportRequest is what `report` is given: the results folder of a test run.
type ReportRequest struct {
	// Results is the folder a run wrote (summary.json inside).
	Results string
}

// Validate checks the request before anything is read.
func (r ReportRequest) Validate() error {
	if r.Results == "" {
		return errors.New("--results is required: give the results folder a test run wrote (summary.json inside)")
	}
	return nil
}

// ReportAnswer is a run's checked summary.json and its renderings.
type ReportAnswer struct {
	// Summary is summary.json, checked (report.ReadResults).
	Summary *report.Summary
	// Markdown is the step summary; Text the lines for a person.
	Markdown, Text string
}

// ExitStatus is the run's own exit status: a failed run's report fails too,
// as `run` exits.
func (a ReportAnswer) ExitStatus() int { return a.Summary.ExitStatus() }

// Report reads and renders the summary.json of a results folder.
func Report(r ReportRequest) (ReportAnswer, error) {
	if err := r.Validate(); err != nil {
		return ReportAnswer{}, err
	}
	s, err := report.ReadResults(r.Results)
	if err != nil {
		return ReportAnswer{}, err
	}
	verdict := "passed"
	if !s.Passed {
		verdict = "FAILED"
		if s.Verdict == report.Inconsistent {
			verdict = "FAILED as inconsistent"
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s, exit code %d\n", s.Suite, s.HW, verdict, s.ExitCode)
	for _, t := range s.Tests {
		fmt.Fprintf(&b, "  %-8s %8.1fs  %s\n", t.Status, t.ElapsedS, t.File)
	}
	for _, n := range s.Inconsistent {
		fmt.Fprintf(&b, "  inconsistent: %s\n", n)
	}
	return ReportAnswer{Summary: s, Markdown: ghoutput.ResultsMarkdown(s), Text: b.String()}, nil
}
