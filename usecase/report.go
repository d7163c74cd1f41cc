package usecase

import (
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
	// Unproven names each shard a ci run's record says passed whose own
	// folder does not prove it (ResultsFolder.UnprovenLines): the folder
	// fails the checks, and its verdict is not a pass.
	Unproven []string
}

// ExitStatus is the run's own exit status: a failed run's report fails too,
// as `run` and `ci` exit, and so does a passed run whose folder does not
// prove it (1).
func (a ReportAnswer) ExitStatus() int {
	if a.CI != nil {
		if code := a.CI.ExitStatus(); code != 0 || len(a.Unproven) == 0 {
			return code
		}
		return 1
	}
	return a.Summary.ExitStatus()
}

// Report reads and renders a results folder with the one reader
// (ReadResultsFolder): a stage run's (run, file-run), or a ci run's (every
// job, each shard's folder, each checked against the run record).
func Report(r ReportRequest) (ReportAnswer, error) {
	if err := r.Validate(); err != nil {
		return ReportAnswer{}, err
	}
	f, err := ReadResultsFolder(r.Results)
	if err != nil {
		return ReportAnswer{}, fmt.Errorf("--results: %w", err)
	}
	switch f.Layout {
	case LayoutCI:
		return ciReport(f)
	case LayoutTriage:
		return ReportAnswer{}, fmt.Errorf("--results %s is a triage's results folder: its verdicts are in %s and %s", r.Results,
			filepath.Join(r.Results, triageFile), filepath.Join(r.Results, htmlpage.FileName))
	}
	s := f.Shards[0].Summary
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

// ciReport renders a ci run's folder: the graph as it ran, each failed
// shard with its first failing file, that file's last lines and its
// run.log (as the run printed them), each shard whose folder does not
// prove its pass, and the folder's step summary.
func ciReport(f *ResultsFolder) (ReportAnswer, error) {
	rep := f.Run
	if rep.Run != nil {
		rep.Event = cirun.Event{Name: rep.Run.Event, Schedule: rep.Run.Schedule}
	}
	var fails []ShardFailure
	for _, s := range f.Shards {
		if s.Job.State != cirun.Failed {
			continue
		}
		shard := filepath.Join(f.Dir, filepath.FromSlash(s.Dir))
		log, _ := fsinput.ReadFile(filepath.Join(shard, stagerun.RunLogFile), fsinput.Kind{Name: "a run.log", Max: stagerun.MaxLogBytes + 4096, NoLink: true})
		fails = append(fails, NewShardFailure(s.Job, s.Dir, s.Summary, string(log)))
	}
	md, _ := fsinput.ReadFile(filepath.Join(f.Dir, stagerun.StepSummaryFile), fsinput.Kind{Name: "a step-summary.md", Max: cirun.MaxReportSize, NoLink: true})
	ans := ReportAnswer{CI: rep, Markdown: string(md), Unproven: f.UnprovenLines()}
	var unproven strings.Builder
	for _, l := range ans.Unproven {
		unproven.WriteString("not proven: " + printable.Line(l) + "\n")
	}
	ans.Text = rep.Text() + FailuresText(f.Dir, fails) + unproven.String() + pageLine(f.Dir)
	return ans, nil
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
