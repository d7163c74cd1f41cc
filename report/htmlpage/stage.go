package htmlpage

import (
	"fmt"

	"github.com/radixark/miles-ci/internal/plural"
	"github.com/radixark/miles-ci/report"
)

// Stage is what a run or file-run page shows: its one shard.
type Stage struct {
	// Summary is the run's summary.json.
	Summary report.Summary
	// Log is its run.log, for each failed file's last lines.
	Log string
	// Where says where it ran (its GPUs and devices; "" for none).
	Where string
	// Mask masks the run's secret values (nil: none).
	Mask func(string) string
}

type testRow struct {
	File, Status, Class, Attempts, Elapsed, EstTime string
}

// RenderStage is a run's or a file-run's report.html.
func RenderStage(st Stage) ([]byte, error) {
	m := masker(st.Mask)
	s := st.Summary
	name := m(s.Suite)
	if s.Shard != nil {
		name += " " + s.Shard.String()
	}
	if s.File != "" {
		name = m(report.Printable(s.File)) + " (" + m(s.Suite) + ")"
	}
	what := "run"
	if s.File != "" {
		what = "file-run"
	}
	p := page{Title: "miles-ci " + what + ": " + name, FailedHead: "Failed files"}
	p.Class = "passed"
	p.Verdict = fmt.Sprintf("%s (exit %d)", s.Verdict, s.ExitStatus())
	if !s.Passed {
		p.Class = "failed"
	}
	add := func(k, v string) {
		if v != "" {
			p.Facts = append(p.Facts, [2]string{k, m(v)})
		}
	}
	add("suite", s.Suite)
	add("backend", string(s.HW))
	if s.Shard != nil {
		add("shard", s.Shard.String())
	}
	add("file", report.Printable(s.File))
	add("cadence", string(s.Cadence))
	add("image", s.Image)
	add("where", st.Where)
	add("runner exit code", fmt.Sprint(s.ExitCode))
	if s.TimeoutS != nil {
		add("timeout", fmt.Sprintf("%d s (miles-ci's timer ended the run)", *s.TimeoutS))
	}
	for _, n := range s.Inconsistent {
		p.Notes = append(p.Notes, m("inconsistent: "+n))
	}
	for _, n := range s.Notes {
		p.Notes = append(p.Notes, m(n))
	}
	p.Gate = gateSection(s.Gate, m)
	var total float64
	var failed failureView
	for _, t := range s.Tests {
		total += t.ElapsedS
		row := testRow{File: m(report.Printable(t.File)), Status: string(t.Status), Class: statusClass(t.Status),
			Attempts: fmt.Sprint(t.Attempts), Elapsed: fmt.Sprintf("%.1f s", t.ElapsedS)}
		if t.EstTime > 0 {
			row.EstTime = fmt.Sprintf("%.0f s", t.EstTime)
		}
		p.Tests = append(p.Tests, row)
		if t.Failed() {
			failed.Files = append(failed.Files, fileView{File: row.File, Status: string(t.Status), Tail: m(joinLines(report.OutputTail(st.Log, t.File, report.TailLines)))})
		}
	}
	p.Tally = fmt.Sprintf("%s, %.1f s of tests", plural.N(len(s.Tests), "file"), total)
	if !s.Passed {
		failed.Title, failed.Log, failed.None = name, "run.log", len(failed.Files) == 0
		failed.notRunAndSkipped(s.NotRun(), s.NotRunWhy(), s.Skipped, m)
		if failed.None {
			failed.Files = []fileView{{File: "run.log", Status: string(s.Verdict), Tail: m(joinLines(report.OutputTail(st.Log, "", report.TailLines)))}}
			failed.None = false
		}
		p.Failures = []failureView{failed}
	}
	return render(p, m)
}

// statusClass is a file status's colour.
func statusClass(s report.Status) string {
	switch s {
	case report.Pass:
		return "passed"
	case report.NotRun:
		return "quiet"
	}
	return "failed"
}
