package htmlpage

import (
	"math/big"
	"testing"

	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/report"
)

// gateSummary is a run's gate with a passing coordinate, a failing one, an
// error whose metric and reason carry markup, and a file with no verdict.
func gateSummary() *report.GateSummary {
	cur, mean := metricgate.Float(0.5), metricgate.Float(0.02)
	return &report.GateSummary{Form: "31f1ca9", Store: "postgres://ci:xxxxx@db/metrics", Files: []report.GateFile{
		{FileVerdict: metricgate.FileVerdict{Identity: metricgate.Identity{TestPath: "tests/e2e/a.py"}, Verdict: metricgate.NotTrusted, Coordinates: []metricgate.CoordinateVerdict{
			{Metric: "train/ppo_kl", Step: big.NewInt(0), Status: metricgate.StatusFail, Current: &cur, BaselineN: 1, BaselineMean: &mean,
				Band: &metricgate.Band{Lo: 0, Hi: 0.04}, Reason: "historical: cur=0.5 vs mean=0.02 (n=1) outside [0, 0.04]"},
			{Metric: "<img src=x>|*bold*", Status: metricgate.StatusError, Reason: "required metric '<script>' missing from record"},
		}}, Record: "gate/tests_e2e_a.py-0123456789.jsonl"},
		{FileVerdict: metricgate.FileVerdict{Identity: metricgate.Identity{TestPath: "tests/e2e/b.py"}, Verdict: metricgate.NoVerdict, Error: "the metric record cannot be read: line 1: not JSON"}},
	}}
}

// TestRenderStageGate: the page shows the gate's facts and a row per
// coordinate, links the record, and escapes what the checkout and the
// record wrote.
func TestRenderStageGate(t *testing.T) {
	s := report.Summary{HW: "cuda", Suite: "stage-c-4-gpu-h200", Verdict: report.Passed, Passed: true, Gate: gateSummary()}
	page, err := RenderStage(Stage{Summary: s})
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, string(page), []string{"<h2>Metric gate</h2>", "form 31f1ca9, store postgres://ci:xxxxx@db/metrics; a shadow verdict",
		`<td class="failed">fail</td><td>0.5</td><td>0.02 (1)</td><td>[0, 0.04]</td>`, `<a href="gate/tests_e2e_a.py-0123456789.jsonl">record</a>`,
		"&lt;img src=x&gt;|*bold*", "the metric record cannot be read: line 1: not JSON"},
		[]string{"<img src=x>", "<script>"})
}
