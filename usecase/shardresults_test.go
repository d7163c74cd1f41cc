package usecase

import (
	"strings"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// TestShardFailureNamesTheFileThatFailed is issue 40's case: pytest stops
// on a collection error in the third file of a CPU shard, so the files
// before and after it never start. The headline, the table row, the
// failed: lines and report.html name the file that failed (not the first
// file that did not pass); the files that never started say so and why,
// without a tail; the disabled file is listed with its reason.
func TestShardFailureNamesTheFileThatFailed(t *testing.T) {
	const a, b, broken, d = "tests/fast/test_a.py", "tests/fast/test_b.py", "tests/fast/test_broken.py", "tests/fast/test_d.py"
	sum := report.Summarize(report.Input{HW: policy.CPU, Suite: "stage-a-cpu", Shard: &policy.Partition{ID: 1, Size: 4}, Cadence: policy.Regular,
		Tests:   []report.Expected{{File: a}, {File: b}, {File: broken}, {File: d}},
		Skipped: []policy.SkippedTest{{File: "tests/fast/test_off.py", Reason: "FIXME: flaky on CPU"}},
		Run: report.RunRecord{Ending: report.Exited, ExitCode: 2, Pytest: &report.PytestReport{Sessions: 1, ExitStatuses: []int{2},
			Files: map[string]report.PytestFile{broken: {Ran: true, Failed: true}}}}})
	log := "==== ERRORS ====\n___ ERROR collecting tests/fast/test_broken.py ___\nE   ModuleNotFoundError: No module named 'torch'\n!!! Interrupted: 1 error during collection !!!\n"

	if got, want := FirstFailure(sum), broken+" fail (failed)"; got != want {
		t.Errorf("the headline: wanted %q, got %q", want, got)
	}
	job := cirun.JobReport{Key: "pr-test/stage-a-cpu", Shard: intp(1), Shards: 4, State: cirun.Failed}
	f := NewShardFailure(job, "stage-a-cpu/2-of-4", &sum, log)
	if f.File != broken || f.Status != report.Fail {
		t.Errorf("wanted the shard's failure to be %s fail, got %q %q", broken, f.File, f.Status)
	}
	text := FailuresText("results", []ShardFailure{f})
	want := "failed: pr-test/stage-a-cpu shard 2/4: " + broken + " fail\n" +
		"    | ==== ERRORS ====\n" +
		"    | ___ ERROR collecting tests/fast/test_broken.py ___\n" +
		"    | E   ModuleNotFoundError: No module named 'torch'\n" +
		"    | !!! Interrupted: 1 error during collection !!!\n" +
		"    3 files never started: the run stopped after " + broken + " failed\n" +
		"    run.log: results/stage-a-cpu/2-of-4/run.log\n"
	if !strings.HasSuffix(text, want) || strings.Count(text, "failed: ") != 1 {
		t.Errorf("the failed: lines: wanted them to end\n%s\ngot\n%s", want, text)
	}
	page, err := Page(&cirun.Report{Jobs: []cirun.JobReport{job}}, "", []ShardFailure{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	html := page.Data
	if n := strings.Count(html, `class="tail"`); n != 1 {
		t.Errorf("wanted one tail (the failed file's), got %d:\n%s", n, html)
	}
	for _, w := range []string{"<code>" + broken + "</code> <span class=\"verdict failed\">fail</span>, its last lines:",
		"Never started, as the run stopped after " + broken + " failed:", "<li><code>" + a + "</code></li>", "<li><code>" + b + "</code></li>",
		"<li><code>" + d + "</code></li>", "Skipped by the plan:", "<li><code>tests/fast/test_off.py</code>: FIXME: flaky on CPU</li>"} {
		if !strings.Contains(html, w) {
			t.Errorf("report.html lacks %q:\n%s", w, html)
		}
	}
	if strings.Contains(html, "<code>"+a+"</code> <span") {
		t.Errorf("report.html shows a file that never started as a failure:\n%s", html)
	}
}
