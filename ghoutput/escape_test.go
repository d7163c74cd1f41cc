package ghoutput

import (
	"strings"
	"testing"

	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// TestPlain checks no line miles-ci prints on stdout is a workflow command
// or holds a terminal escape, whatever a skip reason or a note holds (issue
// 22, case 7).
func TestPlain(t *testing.T) {
	s := report.Summary{HW: policy.CUDA, Suite: "stage-b-2-gpu-h200", Verdict: report.Passed, Passed: true, Tests: []report.TestResult{},
		Skipped: []policy.SkippedTest{{File: "tests/e2e/a.py", Reason: "flaky\n::error file=x::forged\n::add-mask::secret\x1b[2J\x1b]0;title\x07"}},
		Notes:   []string{"  ::stop-commands::tok", "##[set-output name=x;]y"}}
	out := Plain(s.Text())
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(trimmed, "::") || strings.Contains(line, "##[") || strings.ContainsAny(line, "\x1b\x07\r") {
			t.Errorf("wanted no workflow command or control character, got line %q", line)
		}
	}
	if !strings.Contains(out, `(flaky\n::error file=x::forged\n::add-mask::secret\x1b[2J\x1b]0;title\x07)`) {
		t.Errorf("wanted the reason shown escaped on its line, got %q", out)
	}
	if got := Plain("::error::x\n  ::warning::y\nfine\n"); got != ": :error::x\n  : :warning::y\nfine\n" {
		t.Errorf("wanted the commands broken, got %q", got)
	}
}

// TestResultsMarkdownEscapes checks skip reasons, notes and file names put
// no HTML, link or image into the step summary (issue 22, case 7), and the
// summary stays within GitHub's 1 MiB (case 6).
func TestResultsMarkdownEscapes(t *testing.T) {
	s := &report.Summary{HW: policy.CUDA, Suite: "stage-b-2-gpu-h200", Verdict: report.Failed, ExitCode: 1,
		Tests:   []report.TestResult{{File: "tests/e2e/<img src=x onerror=alert(1)>.py", Status: report.Fail}},
		Skipped: []policy.SkippedTest{{File: "tests/e2e/b.py", Reason: `<script>alert(1)</script> [click](https://evil.example) ![i](http://x/i.png) www.evil.example **bold**`}},
		Notes:   []string{`not exported from /results: "<a href=https://evil.example>x</a>"`}}
	md := ResultsMarkdown(s)
	for _, bad := range []string{"<script", "<a href", "](https://", "![i](", "<img", "**bold**", " https://evil", " www.evil"} {
		if strings.Contains(strings.ReplaceAll(md, "`tests/e2e/<img src=x onerror=alert(1)>.py`", ""), bad) {
			t.Errorf("wanted %q escaped, got %s", bad, md)
		}
	}
	if !strings.Contains(md, "`tests/e2e/<img src=x onerror=alert(1)>.py`") {
		t.Errorf("wanted the file name as a code span, got %s", md)
	}
	var many []report.TestResult
	for i := 0; i < 40000; i++ {
		many = append(many, report.TestResult{File: "tests/e2e/test_" + strings.Repeat("x", 40) + ".py", Status: report.Pass})
	}
	big := ResultsMarkdown(&report.Summary{HW: policy.CUDA, Suite: "s", Verdict: report.Passed, Passed: true, Tests: many})
	if len(big) > MaxStepSummaryBytes || !strings.Contains(big, "a step summary is at most 1 MiB") {
		t.Errorf("wanted at most %d bytes with a note, got %d", MaxStepSummaryBytes, len(big))
	}
}
