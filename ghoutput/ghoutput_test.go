package ghoutput

import (
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// golden compares got with testdata/NAME, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	testfiles.Golden(t, filepath.Join("testdata", name), got)
}

func TestAnnotations(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"registry error", &policy.RegistryError{File: "tests/e2e/x,y/test_a.py", Line: 7, Msg: "est_time in register_cuda_ci() must be a literal constant", Fix: "write 100%"},
			"::error file=tests/e2e/x%2Cy/test_a.py,line=7::tests/e2e/x,y/test_a.py: est_time in register_cuda_ci() must be a literal constant (line 7); write 100%25\n"},
		{"wrapped registry error without a line", errors.Join(&policy.RegistryError{File: "tests/e2e/test_b.py", Msg: "No CI registry found in tests/e2e/test_b.py"}),
			"::error file=tests/e2e/test_b.py::tests/e2e/test_b.py: No CI registry found in tests/e2e/test_b.py\n"},
		{"plain error over two lines", errors.New("first: a\r\nsecond"),
			"::error::first: a%0D\n::error::second\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrorAnnotations(tt.err); got != tt.want {
				t.Errorf("wanted %q, got %q", tt.want, got)
			}
		})
	}
}

func loadRegistry(t *testing.T) *policy.Registry {
	t.Helper()
	reg, err := policy.LoadRegistry(filepath.Join("..", "testdata", "miles"))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestPolicyMarkdown(t *testing.T) {
	reg := loadRegistry(t)
	wp, err := policy.ResolveTrigger(policy.Trigger{Event: "pull_request", PRLabelsJSON: `["run-ci-megatron","documentation"]`})
	if err != nil {
		t.Fatal(err)
	}
	diff, err := os.ReadFile(filepath.Join("..", "testdata", "miles", "diffs", "cuda_test.z"))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := policy.SelectPRStages(reg, wp, diff)
	if err != nil {
		t.Fatal(err)
	}
	r := PolicyReport{Trigger: "pull request radixark/miles#2874 at 5f1d0c7e2b9a", Policy: wp, Selection: &sel, Roster: policy.Roster()}
	golden(t, "policy-pr.md", r.Markdown())

	sched, err := policy.ResolveTrigger(policy.Trigger{Event: "schedule", Schedule: "0 15 * * 6"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "policy-weekly.md", PolicyReport{Trigger: "the weekly schedule", Policy: sched, Roster: policy.Roster()}.Markdown())
}

func TestPlanMarkdown(t *testing.T) {
	reg := loadRegistry(t)
	var plans []*policy.Plan
	for i := range 3 {
		p, err := policy.BuildPlan(reg, policy.PlanRequest{HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", Cadence: policy.Regular,
			Labels: []string{"run-ci-megatron", "run-ci-sglang"}, Partition: &policy.Partition{ID: i, Size: 3}})
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	golden(t, "plan.md", PlanMarkdown(plans))
}

func TestImageAndDepsMarkdown(t *testing.T) {
	body := "## Summary\r\n\r\n```text\r\nci-sglang-pr: #1234\r\nci-image-tag: dev-2026|x\r\n```\r\nci-megatron-pr: fix/a\r\nci-megatron-pr: other\r\n"
	img := deps.Image{Image: "radixark/miles:dev-2026", Tag: "dev-2026", Source: deps.FromPRBody, Line: 5}
	d, err := deps.Resolve(deps.Inputs{Backend: policy.CUDA, PRBody: body})
	if err != nil {
		t.Fatal(err)
	}
	lookups := []github.DependencyPR{{Dependency: "sglang", Repo: deps.SGLangRepo, Number: 1234, Title: "[miles] barrier", State: "open", HeadSHA: "c0ffee1234567890abcdef1234567890abcdef12"}}
	golden(t, "deps.md", ImageMarkdown(img, body)+DepsMarkdown(policy.CUDA, d, body, lookups))

	rocm, err := deps.Resolve(deps.Inputs{Backend: policy.ROCM})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "deps-rocm-baked.md", DepsMarkdown(policy.ROCM, rocm, "", nil))
}

func TestResultsMarkdown(t *testing.T) {
	r, err := report.ReadResults(filepath.Join("..", "report", "testdata", "results"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "results.md", ResultsMarkdown(r))
}

func TestCodeSpans(t *testing.T) {
	for in, want := range map[string]string{"a|b": "`a\\|b`", "x`y": "``x`y``", "`z": "`` `z ``", "l1\nl2": "`l1 l2`"} {
		if got := code(in); got != want {
			t.Errorf("code(%q): wanted %q, got %q", in, want, got)
		}
	}
	if got := bodyLine("a\r\nb\nc", 2); got != "b" {
		t.Errorf("wanted %q, got %q", "b", got)
	}
	if !strings.Contains(Mermaid(nil), "flowchart LR") {
		t.Error("wanted a flowchart")
	}
}

// FuzzResultsMarkdown: every summary.json report reads renders with a heading.
func FuzzResultsMarkdown(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "report", "testdata", "results", "summary.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"suite":"s","shard":null,"tests":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := report.ParseResults("summary.json", data)
		if err != nil {
			return
		}
		if !strings.Contains(ResultsMarkdown(r), "### ") {
			t.Fatal("rendered no heading")
		}
	})
}

// TestResultsMarkdownGate: the step summary shows the gate's table, every
// name and reason of the checkout and the record escaped.
func TestResultsMarkdownGate(t *testing.T) {
	cur := metricgate.Float(1204.5)
	s := report.Summary{HW: "cuda", Suite: "stage-c-4-gpu-h200", Verdict: report.Passed, Passed: true, Gate: &report.GateSummary{Form: "31f1ca9", Files: []report.GateFile{
		{FileVerdict: metricgate.FileVerdict{Identity: metricgate.Identity{TestPath: "tests/e2e/a.py"}, Verdict: metricgate.NotTrusted, Coordinates: []metricgate.CoordinateVerdict{
			{Metric: "perf/tok|s", Step: big.NewInt(-1), Status: metricgate.StatusInactive, Current: &cur},
			{Metric: "m", Status: metricgate.StatusError, Reason: "required metric '<b>m</b>' missing from record"}}}}}}}
	md := ResultsMarkdown(&s)
	for _, want := range []string{"**Metric gate** (form `31f1ca9`, no store: every coordinate is a cold start; a shadow verdict: the baseline is not written; it never changes the verdict above)",
		"| `tests/e2e/a.py` | ⚠️ not trusted | `perf/tok\\|s` | -1 | ⚪ inactive | 1204.5 | – | – |",
		"|  |  | `m` | – | ❗ error: required metric '&lt;b&gt;m&lt;/b&gt;' missing from record | – | – | – |"} {
		if !strings.Contains(md, want) {
			t.Errorf("wanted %q in:\n%s", want, md)
		}
	}
}
