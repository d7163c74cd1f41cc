package ghoutput

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/report"
)

// GateMarkdown is gateMarkdown for one shard of a ci run, headed by its
// results folder.
func GateMarkdown(dir string, g *report.GateSummary) string {
	if g == nil {
		return ""
	}
	return "\n#### " + code(dir) + "\n\n" + gateMarkdown(g)
}

// gateMarkdown renders a run's metric-gate verdicts (rules §16): what they
// were judged against, then a row per coordinate (or per file with no
// verdict). Every name and reason comes from the checkout or the test's
// record: each is a code span or escaped text.
func gateMarkdown(g *report.GateSummary) string {
	if g == nil {
		return ""
	}
	var b strings.Builder
	store := "no store: every coordinate is a cold start"
	if g.Store != "" {
		store = "store " + code(g.Store)
	}
	mode := "a shadow verdict: the baseline is not written"
	if g.WritesBaseline {
		mode = "a baseline-writing run"
	}
	fmt.Fprintf(&b, "**Metric gate** (form %s, %s; %s; it never changes the verdict above)\n\n", code(g.Form), store, mode)
	if g.Error != "" {
		fmt.Fprintf(&b, "> %s\n\n", text(g.Error))
		return b.String()
	}
	if len(g.Files) == 0 {
		b.WriteString("No file passed, so none was judged.\n\n")
		return b.String()
	}
	b.WriteString("| file | verdict | metric | step | status | value | mean (n) | band |\n|---|---|---|---:|---|---:|---:|---|\n")
	for _, v := range g.Files {
		verdict := map[metricgate.Verdict]string{metricgate.Trusted: "✅ trusted", metricgate.NotTrusted: "⚠️ not trusted", metricgate.NoVerdict: "❔ no verdict"}[v.Verdict]
		if v.Verdict == metricgate.NoVerdict || len(v.Coordinates) == 0 {
			why := "no gate declared"
			if v.Verdict == metricgate.NoVerdict {
				why = v.Error
			}
			fmt.Fprintf(&b, "| %s | %s | %s | | | | | |\n", code(v.TestPath), verdict, text(why))
			continue
		}
		for i, c := range v.Coordinates {
			file, vd := "", ""
			if i == 0 {
				file, vd = code(v.TestPath), verdict
			}
			step, value, mean, band := "–", "–", "–", "–"
			if c.Step != nil {
				step = c.Step.String()
			}
			if c.Current != nil {
				value = gateNumber(*c.Current)
			}
			if c.BaselineMean != nil {
				mean = fmt.Sprintf("%s (%d)", gateNumber(*c.BaselineMean), c.BaselineN)
			}
			if c.Band != nil {
				band = "[" + gateNumber(c.Band.Lo) + ", " + gateNumber(c.Band.Hi) + "]"
			}
			status := map[metricgate.Status]string{metricgate.StatusPass: "✅ pass", metricgate.StatusFail: "❌ fail",
				metricgate.StatusInactive: "⚪ inactive", metricgate.StatusError: "❗ error"}[c.Status]
			if c.Status == metricgate.StatusError || c.Status == metricgate.StatusFail {
				status += ": " + text(c.Reason)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", file, vd, code(c.Metric), step, status, value, mean, band)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// gateNumber is a number as the gate's reasons print it (Python's .6g).
func gateNumber(f metricgate.Float) string { return metricgate.G6(float64(f)) }
