package htmlpage

import (
	"fmt"

	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/report"
)

// gateView is the page's metric-gate section (rules §16).
type gateView struct {
	Facts, Error string
	Rows         []gateRow
}

// gateRow is one coordinate, or one file with none; File and Verdict only
// on a file's first row.
type gateRow struct {
	File, Verdict, VerdictClass                            string
	Metric, Step, Status, Class, Value, Mean, Band, Reason string
	// Record links the file's record in the results folder.
	Record string
}

// gateSection renders a run's gate verdicts, every text masked and made
// one printable line (the checkout's names, the record's reasons).
func gateSection(g *report.GateSummary, m func(string) string) *gateView {
	if g == nil {
		return nil
	}
	p := func(s string) string { return m(report.Printable(s)) }
	store := "no store: every coordinate is a cold start"
	if g.Store != "" {
		store = "store " + g.Store
	}
	mode := "a shadow verdict: the baseline is not written"
	if g.WritesBaseline {
		mode = "a baseline-writing run"
	}
	v := &gateView{Facts: p(fmt.Sprintf("form %s, %s; %s; the gate never changes the run's verdict", g.Form, store, mode)), Error: p(g.Error)}
	for _, f := range g.Files {
		first := gateRow{File: p(f.TestPath), Verdict: string(f.Verdict), VerdictClass: map[metricgate.Verdict]string{metricgate.Trusted: "passed"}[f.Verdict]}
		if first.VerdictClass == "" {
			first.VerdictClass = "failed"
		}
		if f.Verdict == metricgate.NoVerdict || len(f.Coordinates) == 0 {
			first.Reason = "no gate declared"
			if f.Verdict == metricgate.NoVerdict {
				first.Reason = p(f.Error)
			}
			v.Rows = append(v.Rows, first)
			continue
		}
		for i, c := range f.Coordinates {
			row := gateRow{}
			if i == 0 {
				row = first
				row.Record = f.Record
			}
			row.Metric, row.Status, row.Reason = p(c.Metric), string(c.Status), p(c.Reason)
			row.Class = map[metricgate.Status]string{metricgate.StatusPass: "passed", metricgate.StatusFail: "failed", metricgate.StatusError: "failed", metricgate.StatusInactive: "quiet"}[c.Status]
			if c.Step != nil {
				row.Step = c.Step.String()
			}
			if c.Current != nil {
				row.Value = metricgate.G6(float64(*c.Current))
			}
			if c.BaselineMean != nil {
				row.Mean = fmt.Sprintf("%s (%d)", metricgate.G6(float64(*c.BaselineMean)), c.BaselineN)
			}
			if c.Band != nil {
				row.Band = "[" + metricgate.G6(float64(c.Band.Lo)) + ", " + metricgate.G6(float64(c.Band.Hi)) + "]"
			}
			v.Rows = append(v.Rows, row)
		}
	}
	return v
}
