// Package htmlpage writes report.html, the one page a run's results folder
// holds for a person to open (issue 32): for a ci run the run, its job
// graph, each shard's outcome and each failed file's last lines; for a
// run or file-run its one shard; for a triage its verdict table (issue
// 33); with relative links to the folder's run.log files. The page is self-contained (inline CSS,
// no script, no font, image or link outside the page), so it opens from
// a file with no network. Everything a test or the store wrote is escaped
// by html/template, and masked with the run's masker before it is
// escaped. It is pure: the same data gives the same bytes (no clock).
package htmlpage

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/triage"
)

// FileName is the page's name in a results folder.
const FileName = "report.html"

// CI is what a ci run's page shows.
type CI struct {
	// Report is the run's graph as it ended (summary.json).
	Report *cirun.Report
	// Reuse is the dependency layers' line ("" for none).
	Reuse string
	// Failures are the failed shards that left results, in graph order.
	Failures []Failure
	// Mask masks the run's secret values (nil: none).
	Mask func(string) string
	// WhatIf marks a prediction (ci --what-if): nothing ran, the times are
	// predicted.
	WhatIf bool
}

// Failure is a failed shard: every file of it that did not pass, with
// the last lines it printed.
type Failure struct {
	// Title is the job's name ("pr-test/stage-a-cpu shard 2/4").
	Title string
	// Dir is the shard's folder in the results (STAGE/2-of-4); its
	// run.log is there.
	Dir string
	// Files are its files that failed or timed out, in run order (none
	// when no file did: Why says why).
	Files []FailedFile
	// Why says why no file failed, when none did ("" is an inconsistent
	// run).
	Why string
	// NotRun are the files the shard never started, and NotRunWhy why
	// ("the run stopped after FILE failed"); the page shows no tail of theirs.
	NotRun    []string
	NotRunWhy string
	// Skipped are the plan's disabled files, with their reasons.
	Skipped []policy.SkippedTest
}

// FailedFile is one file that did not pass and what it printed last
// (report.OutputTail).
type FailedFile struct {
	File   string
	Status report.Status
	Tail   []string
}

// page is what the template shows: plain strings, each masked.
type page struct {
	Title    string
	Verdict  string
	Class    string
	Facts    [][2]string
	Hosts    [][2]string
	Tally    string
	Reuse    string
	Graph    *svgGraph
	Timeline *svgTimeline
	Jobs     []jobRow
	Failures []failureView
	// FailedHead heads the failures ("Failed shards" when empty).
	FailedHead string
	Triage     []triageRow
	Notes      []string
	Tests      []testRow
	Gate       *gateView
}

type jobRow struct {
	Title, State, Class, Needs, Where, Duration, Attempt, Reason, Dir, Log string
}

type failureView struct {
	Title, Dir, Log string
	Files           []fileView
	None            bool
	// Why is what the page says when no file failed (None).
	Why string
	// NotRun and NotRunWhy are the files that never started and why.
	NotRun    []string
	NotRunWhy string
	// Skipped are the disabled files, each with its reason.
	Skipped [][2]string
}

type fileView struct {
	File, Status string
	Tail         string
}

// RenderCI is a ci run's report.html.
func RenderCI(c CI) ([]byte, error) {
	m := masker(c.Mask)
	r := c.Report
	code := r.ExitStatus()
	p := page{Title: "miles-ci ci", Tally: m(r.Tally()), Reuse: m(c.Reuse)}
	p.Verdict, p.Class = verdict(code)
	if c.WhatIf {
		p.Title, p.Class = "miles-ci ci --what-if", "would-run"
		p.Verdict = "a prediction: nothing ran"
		if code == cirun.ExitCannotRun {
			p.Verdict, p.Class = "a prediction: some jobs cannot run on this fleet", "not-run"
		}
		p.Facts = append(p.Facts, [2]string{"event", m(r.Heading())})
	}
	if f := r.Run; f != nil {
		p.Title += ": " + m(f.Event)
		p.Facts = runFacts(f, m)
	}
	if r.Attempt > 0 {
		p.Facts = append(p.Facts, [2]string{"run attempt", fmt.Sprint(r.Attempt)})
	}
	if r.Cancelled {
		p.Facts = append(p.Facts, [2]string{"cancelled", "the run was interrupted; finished jobs keep their results"})
	}
	if len(r.Hosts) == 0 {
		p.Hosts = append(p.Hosts, [2]string{"this host", "--gpus " + m(r.Host)})
	}
	for _, h := range r.Hosts {
		v := h.GPUs
		if h.Engine != "" {
			v += " (engine " + h.Engine + ")"
		}
		p.Hosts = append(p.Hosts, [2]string{m(h.Name), m(v)})
	}
	p.Graph = layout(r, m)
	p.Timeline = timelineOf(r, m)
	failedDir := map[string]bool{}
	for _, f := range c.Failures {
		failedDir[f.Dir] = true
		v := failureView{Title: m(f.Title), Dir: m(f.Dir), Log: logLink(f.Dir), None: len(f.Files) == 0, Why: m(f.Why)}
		for _, ff := range f.Files {
			v.Files = append(v.Files, fileView{File: m(report.Printable(ff.File)), Status: string(ff.Status), Tail: m(joinLines(ff.Tail))})
		}
		v.notRunAndSkipped(f.NotRun, f.NotRunWhy, f.Skipped, m)
		p.Failures = append(p.Failures, v)
	}
	for _, j := range r.Jobs {
		row := jobRow{Title: m(j.Title()), State: string(j.State), Class: stateClass(j.State), Needs: m(report.Printable(strings.Join(j.Needs, ", "))), Reason: m(report.Printable(j.Reason))}
		row.Where = m(where(j))
		if j.State != cirun.Skipped && j.State != cirun.Excluded && j.State != cirun.NotModelled && j.State != cirun.WouldRun {
			row.Duration = fmt.Sprintf("%.1f s", j.Duration)
		}
		switch {
		case j.Reused:
			row.Attempt = fmt.Sprintf("reused (attempt %d)", j.Attempt)
		case j.Attempt > 0:
			row.Attempt = fmt.Sprintf("attempt %d", j.Attempt)
		}
		if j.Results != "" {
			row.Dir, row.Log = m(j.Results), logLink(j.Results)
		}
		p.Jobs = append(p.Jobs, row)
	}
	return render(p, m)
}

// masker is mask, or no masking.
func masker(mask func(string) string) func(string) string {
	if mask == nil {
		return func(s string) string { return s }
	}
	return mask
}

// render executes the page and masks it once more as a whole: a secret
// is masked before escaping (so one with & or < in it is caught), and
// after (so one split over two fields is too).
func render(p page, m func(string) string) ([]byte, error) {
	var b bytes.Buffer
	if err := tmpl.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("report.html: %w", err)
	}
	return []byte(m(b.String())), nil
}

// verdict is an exit status as the page's headline and its colour.
func verdict(code int) (string, string) {
	switch code {
	case cirun.ExitPassed:
		return "passed (exit 0)", "passed"
	case cirun.ExitFailed:
		return "failed (exit 1)", "failed"
	case cirun.ExitCancelled:
		return "cancelled (exit 130)", "cancelled"
	case cirun.ExitCannotRun:
		return "could not run every job (exit 125)", "not-run"
	}
	return fmt.Sprintf("exit %d", code), "failed"
}

// runFacts are the run's trigger facts, in a fixed order.
func runFacts(f *cirun.RunFacts, m func(string) string) [][2]string {
	var out [][2]string
	add := func(k, v string) {
		if v != "" {
			out = append(out, [2]string{k, m(v)})
		}
	}
	add("event", f.Event)
	add("action", f.Action)
	add("schedule", f.Schedule)
	if f.PRNumber > 0 {
		add("pull request", fmt.Sprintf("#%d", f.PRNumber))
	}
	if f.Fork {
		add("from a fork", "yes")
	}
	add("labels", strings.Join(f.Labels, ", "))
	var inputs []string
	for _, k := range sortedKeys(f.Inputs) {
		inputs = append(inputs, k+"="+f.Inputs[k])
	}
	add("inputs", strings.Join(inputs, " "))
	add("commit", f.Commit)
	add("planner", f.Planner)
	add("run id", f.RunID)
	return out
}

// where says where a job ran: its host, GPUs and devices, the stage's
// model and a substitution.
func where(j cirun.JobReport) string {
	var parts []string
	if j.Host != "" {
		parts = append(parts, "on "+j.Host)
	}
	if j.GPUs > 0 {
		g := fmt.Sprintf("%d GPUs", j.GPUs)
		if j.Model != "" {
			g = fmt.Sprintf("%d %s GPUs", j.GPUs, j.Model)
		}
		if len(j.Devices) > 0 {
			g += " [" + j.Devices.String() + "]"
		}
		parts = append(parts, g)
	}
	if j.Substituted != "" {
		parts = append(parts, "substituted "+j.Substituted)
	}
	return report.Printable(strings.Join(parts, " ")) // a host's name is a hosts file's
}

// logLink is the relative link to a results folder's run.log.
func logLink(dir string) string {
	if dir == "" {
		return ""
	}
	return strings.TrimSuffix(dir, "/") + "/run.log"
}

// stateClass is a job state's CSS class (its colour).
func stateClass(s cirun.State) string {
	switch s {
	case cirun.Passed, cirun.Failed, cirun.NotRun, cirun.Cancelled, cirun.WouldRun:
		return string(s)
	}
	return "quiet"
}

type triageRow struct {
	File, Verdict, Class, Why, Head, Base string
	Attempts                              []attemptRow
}

type attemptRow struct {
	Name, Outcome, Class, Duration, Log, Reason string
}

// Triage is what a triage's page shows: one verdict per file.
type Triage struct {
	// Session names the triage; Head and Base are the two sides' commits.
	Session, Head, Base string
	Files               []TriageFile
	// Mask masks the run's secret values (nil: none).
	Mask func(string) string
}

// TriageFile is one file's verdict and its attempts.
type TriageFile struct {
	File     string
	Decision triage.Decision
	Attempts []TriageAttempt
}

// TriageAttempt is one attempt and its results folder (relative to the
// triage's folder, "" when it has none).
type TriageAttempt struct {
	triage.Attempt
	Dir string
}

// RenderTriage is a triage's report.html: the verdict table.
func RenderTriage(t Triage) ([]byte, error) {
	m := masker(t.Mask)
	p := page{Title: "miles-ci triage " + m(t.Session)}
	p.Verdict, p.Class = "no regression", "passed"
	for _, f := range t.Files {
		switch f.Decision.Verdict {
		case triage.Regression:
			p.Verdict, p.Class = "regression", "failed"
		case triage.Inconclusive:
			if p.Class != "failed" {
				p.Verdict, p.Class = "inconclusive", "not-run"
			}
		}
	}
	p.Facts = [][2]string{{"head", m(t.Head)}, {"merge base", m(t.Base)}}
	for _, f := range t.Files {
		c := f.Decision.Counts
		row := triageRow{File: m(report.Printable(f.File)), Verdict: string(f.Decision.Verdict), Class: verdictClass(f.Decision.Verdict), Why: m(report.Printable(f.Decision.Reason)),
			Head: fmt.Sprintf("%d pass / %d fail", c.HeadPass, c.HeadFail), Base: fmt.Sprintf("%d pass / %d fail", c.BasePass, c.BaseFail)}
		if c.BasePass+c.BaseFail == 0 {
			row.Base = "not run"
		}
		for _, a := range f.Attempts {
			ar := attemptRow{Name: fmt.Sprintf("%s #%d", a.Side, a.N), Outcome: string(a.Outcome), Class: outcomeClass(a.Outcome),
				Duration: fmt.Sprintf("%.1f s", a.DurationS), Reason: m(report.Printable(a.Reason))}
			if a.Log != "" && a.Dir != "" {
				ar.Log = logLink(m(a.Dir))
			}
			row.Attempts = append(row.Attempts, ar)
		}
		p.Triage = append(p.Triage, row)
	}
	return render(p, m)
}

// verdictClass is a verdict's colour: a regression is the change's fault.
func verdictClass(v triage.Verdict) string {
	switch v {
	case triage.Regression:
		return "failed"
	case triage.PreExisting, triage.Flaky:
		return "not-run"
	case triage.NotReproduced:
		return "passed"
	}
	return "cancelled"
}

// outcomeClass is an attempt's colour.
func outcomeClass(o triage.Outcome) string {
	switch o {
	case triage.Pass:
		return "passed"
	case triage.Fail:
		return "failed"
	}
	return "not-run"
}

// joinLines is a tail as the text of a <pre>.
func joinLines(lines []string) string { return strings.Join(lines, "\n") }

// notRunAndSkipped adds the files a failed shard never started, with why,
// and its disabled files, with their reasons: named, never with another
// file's tail.
func (v *failureView) notRunAndSkipped(notRun []string, why string, skipped []policy.SkippedTest, m func(string) string) {
	for _, f := range notRun {
		v.NotRun = append(v.NotRun, m(report.Printable(f)))
	}
	v.NotRunWhy = m(why)
	for _, sk := range skipped {
		v.Skipped = append(v.Skipped, [2]string{m(report.Printable(sk.File)), m(report.Printable(sk.Reason))})
	}
}
