package usecase

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/plural"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/stagerun"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/report/htmlpage"
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
	// Summary is a stage run's summary.json, checked (report.ReadResults);
	// nil for a ci run's folder.
	Summary *report.Summary
	// CI is a ci run's summary.json (every job), nil for a stage run's.
	CI *cirun.Report
	// Markdown is the step summary; Text the lines for a person.
	Markdown, Text string
}

// ExitStatus is the run's own exit status: a failed run's report fails too,
// as `run` and `ci` exit.
func (a ReportAnswer) ExitStatus() int {
	if a.CI != nil {
		return a.CI.ExitStatus()
	}
	return a.Summary.ExitStatus()
}

// Report reads and renders the summary.json of a results folder: a stage
// run's (run, file-run), or a ci run's (every job, each shard's folder).
func Report(r ReportRequest) (ReportAnswer, error) {
	if err := r.Validate(); err != nil {
		return ReportAnswer{}, err
	}
	if data, ok := ciSummary(r.Results); ok {
		name := filepath.Join(r.Results, "summary.json")
		rep, err := cirun.ParseReport(name, data)
		if err != nil {
			return ReportAnswer{}, err
		}
		return ciReport(&PreviousRun{Dir: r.Results, Report: rep})
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
	// A results folder is outside input: each field shows on its line.
	fmt.Fprintf(&b, "%s (%s): %s, exit code %d\n", printable.Line(s.Suite), printable.Line(string(s.HW)), verdict, s.ExitCode)
	for _, t := range s.Tests {
		fmt.Fprintf(&b, "  %-8s %8.1fs  %s\n", t.Status, t.ElapsedS, printable.Line(t.File))
	}
	for _, n := range s.Inconsistent {
		fmt.Fprintf(&b, "  inconsistent: %s\n", printable.Line(n))
	}
	return ReportAnswer{Summary: s, Markdown: ghoutput.ResultsMarkdown(s), Text: b.String() + pageLine(r.Results)}, nil
}

// pageLine points at the folder's report.html, when it has one.
func pageLine(dir string) string {
	name := filepath.Join(dir, htmlpage.FileName)
	if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return "page: " + name + " (open it in a browser)\n"
}

// ciSummary is dir's summary.json when it is a ci run's (it lists jobs).
func ciSummary(dir string) ([]byte, bool) {
	data, err := fsinput.ReadFile(filepath.Join(dir, "summary.json"), fsinput.Kind{Name: "a summary.json", Max: cirun.MaxReportSize})
	return data, err == nil && bytes.Contains(data, []byte(`"jobs"`))
}

// ciReport renders a ci run's folder: the graph as it ran, each failed
// shard with its first failing file, that file's last lines and its
// run.log (as the run printed them), and the folder's step summary.
func ciReport(prev *PreviousRun) (ReportAnswer, error) {
	rep := prev.Report
	if rep.Run != nil {
		rep.Event = cirun.Event{Name: rep.Run.Event, Schedule: rep.Run.Schedule}
	}
	var fails []ShardFailure
	for _, j := range rep.Jobs {
		dir := j.ResultsDir()
		if j.State != cirun.Failed || dir == "" {
			continue
		}
		shard := filepath.Join(prev.Dir, filepath.FromSlash(dir))
		s, _ := report.ReadResults(shard)
		log, _ := fsinput.ReadFile(filepath.Join(shard, stagerun.RunLogFile), fsinput.Kind{Name: "a run.log", Max: stagerun.MaxLogBytes + 4096})
		fails = append(fails, NewShardFailure(j, dir, s, string(log)))
	}
	md, _ := fsinput.ReadFile(filepath.Join(prev.Dir, stagerun.StepSummaryFile), fsinput.Kind{Name: "a step-summary.md", Max: cirun.MaxReportSize})
	return ReportAnswer{CI: rep, Markdown: string(md), Text: rep.Text() + FailuresText(prev.Dir, fails) + pageLine(prev.Dir)}, nil
}

// FailuresText lists each failed shard under a ci run's graph: its first
// failing file, the last lines that file printed, and its run.log.
func FailuresText(results string, fs []ShardFailure) string {
	var b strings.Builder
	for _, f := range fs {
		what := f.Why
		switch {
		case f.File != "":
			what = report.Printable(f.File) + " " + string(f.Status)
		case what == "":
			what = "no file failed; the run was inconsistent (its summary.json says how)"
		}
		fmt.Fprintf(&b, "failed: %s: %s\n", f.Title, what)
		for _, l := range f.Tail {
			b.WriteString("    | " + l + "\n")
		}
		if n := len(f.NotRun); n > 0 {
			fmt.Fprintf(&b, "    %s never started: %s\n", plural.N(n, "file"), f.NotRunWhy)
		}
		fmt.Fprintf(&b, "    run.log: %s\n", filepath.Join(results, filepath.FromSlash(f.Dir), stagerun.RunLogFile))
	}
	return b.String()
}
