package usecase

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

func gateFixture() string { return filepath.Join("..", "testdata", "miles-gate") }

// gateRun is a CUDA stage run of the fixture whose files are given with
// their status, and the records the wrapper kept.
func gateRun(tests []report.TestResult, recs []report.GateRecord) (stagerun.Result, stagerun.Request) {
	req := stagerun.Request{Stage: policy.Stage{Name: "stage-c-4-gpu-h200", Backend: policy.CUDA}, Plan: &policy.Plan{Cadence: policy.Nightly},
		HeadSHA: "abc", PRNumber: "42"}
	s := report.Summary{HW: policy.CUDA, Suite: req.Stage.Name, Verdict: report.Failed, ExitCode: 255, Tests: tests}
	return stagerun.Result{Summary: s, GateRecords: recs, Files: []stagerun.ResultFile{{Name: stagerun.SummaryFile, Data: "{}"}}}, req
}

// TestWithGate: each passing file is judged on the record of its passing
// attempt, the verdicts go into summary.json (masked) and the record into
// gate/; a failed file is not judged; the run's verdict stays.
func TestWithGate(t *testing.T) {
	const file = "tests/e2e/megatron/test_grpo.py"
	record := `{"metric": "train/ppo_kl", "series": [[0, 0.011], [1, 0.013]]}
{"metric": "perf/tokens_per_s", "series": [[0, 1], [1, 2]], "note": "secret-0123456789"}
`
	res, req := gateRun([]report.TestResult{{File: file, Status: report.Pass, Attempts: 2}, {File: "tests/e2e/other.py", Status: report.Fail, Attempts: 1}},
		[]report.GateRecord{{File: file, Attempt: 1, Problem: "missing"}, {File: file, Attempt: 2, Record: &record}})
	m, err := report.NewMasker(map[string]string{"S": "secret-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	out := WithGate(context.Background(), res, req, GateJudge{Source: CheckoutSource(gateFixture()), Store: "gate.db"}, m)
	g := out.Summary.Gate
	if g == nil || len(g.Files) != 1 || g.Files[0].Verdict != metricgate.Trusted || len(g.Files[0].Coordinates) != 3 || !g.WritesBaseline {
		t.Fatalf("wanted the passing file trusted on attempt 2's record, a nightly run writing, got %+v", g)
	}
	if id := g.Files[0].Identity; id != (metricgate.Identity{TestPath: file, Backend: "cuda", Suite: "stage-c-4-gpu-h200"}) {
		t.Errorf("wanted the stage as the suite, got %+v", id)
	}
	if p := g.Provenance; p.CommitSHA != "abc" || p.PRNumber == nil || *p.PRNumber != 42 {
		t.Errorf("wanted the provenance of GITHUB_COMMIT_NAME abc_42, got %+v", p)
	}
	if out.Summary.Verdict != report.Failed || out.Summary.ExitCode != 255 {
		t.Errorf("the gate changed the run's verdict: %+v", out.Summary)
	}
	files := map[string]string{}
	for _, f := range out.Files {
		files[f.Name] = f.Data
	}
	var back report.Summary
	if err := json.Unmarshal([]byte(files[stagerun.SummaryFile]), &back); err != nil || back.Gate == nil || len(back.Gate.Files) != 1 {
		t.Errorf("wanted summary.json to hold the gate, got %v\n%s", err, files[stagerun.SummaryFile])
	}
	rec := files[report.RecordFile(metricgate.RecordKey(file))]
	if !strings.Contains(rec, "train/ppo_kl") || strings.Contains(rec, "secret-0123456789") || g.Files[0].Record == "" {
		t.Errorf("wanted the record kept in gate/, masked, got %q", rec)
	}
}

// TestWithGateWithout: no judge, a run that is not a CUDA stage run, or a
// checkout without a gate leave the results as they were; a file whose
// record the wrapper could not keep has no verdict, saying why.
func TestWithGateWithout(t *testing.T) {
	const file = "tests/e2e/megatron/test_grpo.py"
	res, req := gateRun([]report.TestResult{{File: file, Status: report.Pass, Attempts: 1}}, []report.GateRecord{{File: file, Attempt: 1, Problem: "not a regular file"}})
	ctx := context.Background()
	judge := GateJudge{Source: CheckoutSource(gateFixture())}
	if out := WithGate(ctx, res, req, GateJudge{}, nil); out.Summary.Gate != nil {
		t.Error("the zero judge judged")
	}
	rocm := req
	rocm.Stage.Backend = policy.ROCM
	if out := WithGate(ctx, res, rocm, judge, nil); out.Summary.Gate != nil {
		t.Error("a ROCm run was judged")
	}
	if out := WithGate(ctx, res, req, GateJudge{Source: CheckoutSource(filepath.Join("..", "testdata", "miles"))}, nil); out.Summary.Gate != nil {
		t.Error("a checkout without a gate was judged")
	}
	out := WithGate(ctx, res, req, judge, nil)
	if g := out.Summary.Gate; g == nil || g.WritesBaseline || g.Files[0].Verdict != metricgate.NoVerdict || g.Files[0].Error != "the merged record of attempt 1: not a regular file" {
		t.Errorf("wanted no verdict naming the record's problem (and no store, no baseline), got %+v", g)
	}
}

// TestCheckGateDB refuses the store the container's harness writes itself.
func TestCheckGateDB(t *testing.T) {
	if err := CheckGateDB("postgres://a@h/db", "postgres://a@h/db"); err == nil {
		t.Error("wanted the container's own store refused")
	}
	if err := CheckGateDB("", "postgres://a@h/db"); err != nil {
		t.Errorf("wanted no --gate-db accepted, got %v", err)
	}
}
