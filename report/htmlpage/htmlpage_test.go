package htmlpage

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/timeline"
	"github.com/radixark/miles-ci/triage"
)

func shard(i int) *int { return &i }

// ciRun is a pull_request run in which stage-a-cpu's first shard failed
// and the GPU stage was skipped by the fast-fail.
func ciRun(tail []string, dir string) CI {
	rep := &cirun.Report{
		Run:     &cirun.RunFacts{RunID: "1733300000", Commit: "31f1ca9", Planner: "miles-ci", Event: "pull_request", Labels: []string{"run-ci-megatron"}, PRNumber: 7},
		Attempt: 1,
		Host:    "h200:0-7",
		Jobs: []cirun.JobReport{
			{Key: "pr-test/policy", Kind: cirun.KindPolicy, State: cirun.Passed, Result: "success", Needs: []string{}},
			{Key: "pr-test/stage-a-cpu", Kind: cirun.KindStage, Stage: "stage-a-cpu", Shard: shard(0), Shards: 2, State: cirun.Failed, Result: "failure", Needs: []string{"pr-test/policy"}, Duration: 12.5, ExitCode: 1, Results: dir, Attempt: 1, Reason: "tests/fast/test_a1.py fail (failed)"},
			{Key: "pr-test/stage-a-cpu", Kind: cirun.KindStage, Stage: "stage-a-cpu", Shard: shard(1), Shards: 2, State: cirun.Passed, Result: "success", Needs: []string{"pr-test/policy"}, Duration: 3, Results: "stage-a-cpu/2-of-2", Attempt: 1, Reused: true},
			{Key: "pr-test/stage-b-2-gpu-h200", Kind: cirun.KindStage, Stage: "stage-b-2-gpu-h200", State: cirun.Skipped, Needs: []string{"pr-test/policy", "pr-test/stage-a-cpu"}, GPUs: 2, Model: "h200", Devices: device.Set{"0", "1"}, Substituted: "h100=h200", Reason: "cross-stage fast-fail"},
		},
	}
	return CI{Report: rep, Reuse: "dependency layers: 2 shard(s) prepared 1 distinct layer set(s); 1 reused one another's (same image and refs)",
		Failures: []Failure{{Title: rep.Jobs[1].Title(), Dir: dir, Files: []FailedFile{{File: "tests/fast/test_a1.py", Status: report.Fail, Tail: tail}}}}}
}

// passedRun is ciRun with every job passed.
func passedRun() CI {
	c := ciRun(nil, "stage-a-cpu/1-of-2")
	c.Failures = nil
	for i := range c.Report.Jobs {
		c.Report.Jobs[i].State, c.Report.Jobs[i].Reason = cirun.Passed, ""
	}
	return c
}

// external finds what a page would fetch from elsewhere: a src or href
// with a scheme or a // host, a url(), a <link>, or a script.
var external = regexp.MustCompile(`(?i)(src|href)\s*=\s*"?\s*([a-z][a-z0-9+.-]*:|//)|url\(|<link|<script|@import`)

// checkPage wants every want in page, no wantNot, and no reference
// outside the page.
func checkPage(t *testing.T, page string, want, wantNot []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("wanted %q in the page, got:\n%s", w, page)
		}
	}
	for _, w := range wantNot {
		if strings.Contains(page, w) {
			t.Errorf("wanted no %q in the page, got:\n%s", w, page)
		}
	}
	if x := external.FindString(page); x != "" {
		t.Errorf("wanted no reference outside the page, got %q in:\n%s", x, page)
	}
}

func TestRenderCI(t *testing.T) {
	hostile := "</pre><script>alert(1)</script>"
	for _, tc := range []struct {
		name      string
		page      CI
		want      []string
		wantNot   []string
		mask      map[string]string
		wantClass string
	}{
		{
			name: "a failed shard shows its tail and links its run.log",
			page: ciRun([]string{"E   assert False", "FAILED tests/fast/test_a1.py::test_broken"}, "stage-a-cpu/1-of-2"),
			want: []string{`id="miles-ci-report"`, `data-verdict="failed"`, "failed (exit 1)", "E   assert False\nFAILED tests/fast/test_a1.py::test_broken</pre>",
				`<a href="stage-a-cpu/1-of-2/run.log">`, "pr-test/stage-a-cpu shard 1/2", "pull_request", "31f1ca9", "run-ci-megatron", "#7",
				"--gpus h200:0-7", "reused (attempt 1)", "substituted h100=h200", "2 h200 GPUs [0,1]", "pr-test/policy, pr-test/stage-a-cpu",
				"12.5 s", "dependency layers:", `<svg id="graph"`, "pr-test/stage-a-cpu ×2"},
			wantNot:   []string{"<details"},
			wantClass: "failed",
		},
		{
			name:      "a test's output is text, not markup",
			page:      ciRun([]string{hostile, `<img src="http://evil.example/x.png">`}, "stage-a-cpu/1-of-2"),
			want:      []string{"&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=&#34;http://evil.example/x.png&#34;&gt;"},
			wantNot:   []string{hostile, "<img"},
			wantClass: "failed",
		},
		{
			name:      "a results folder that is not a path is no link",
			page:      ciRun([]string{"x"}, "javascript:alert(1)//"),
			wantNot:   []string{`href="javascript`},
			wantClass: "failed",
		},
		{
			name:      "secrets are masked, also where escaping would change them",
			page:      ciRun([]string{"token=hf_secret_value_1", "key=a<b&c>d-secret"}, "stage-a-cpu/1-of-2"),
			mask:      map[string]string{"HF_TOKEN": "hf_secret_value_1", "OTHER": "a<b&c>d-secret"},
			want:      []string{"token=***", "key=***"},
			wantNot:   []string{"hf_secret_value_1", "secret_value", "d-secret"},
			wantClass: "failed",
		},
		{
			name:      "a passed run",
			page:      passedRun(),
			want:      []string{`data-verdict="passed"`, "passed (exit 0)", "4 jobs: 4 passed", `<a href="stage-a-cpu/2-of-2/run.log">`},
			wantNot:   []string{"Failed shards", `class="tail"`},
			wantClass: "passed",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mask != nil {
				m, err := report.NewMasker(tc.mask)
				if err != nil {
					t.Fatal(err)
				}
				tc.page.Mask = m.Mask
			}
			got, err := RenderCI(tc.page)
			if err != nil {
				t.Fatal(err)
			}
			page := string(got)
			checkPage(t, page, tc.want, tc.wantNot)
			if !strings.Contains(page, `data-verdict="`+tc.wantClass+`"`) {
				t.Errorf("wanted the verdict %q, got:\n%s", tc.wantClass, page)
			}
			again, _ := RenderCI(tc.page)
			if !bytes.Equal(got, again) {
				t.Errorf("wanted the same bytes from the same run, got two pages")
			}
		})
	}
}

func TestRenderCIOfADryRunAndACancelledFleet(t *testing.T) {
	rep := &cirun.Report{Cancelled: true, Hosts: []cirun.HostReport{{Name: "h200-a", GPUs: "h200:0-7", Engine: "tcp://10.0.0.2:1234"}}, Jobs: []cirun.JobReport{
		{Key: "pr-test/policy", Kind: cirun.KindPolicy, State: cirun.Cancelled, Host: "h200-a"},
	}}
	got, err := RenderCI(CI{Report: rep})
	if err != nil {
		t.Fatal(err)
	}
	page := string(got)
	for _, w := range []string{"cancelled (exit 130)", "h200-a", "h200:0-7 (engine tcp://10.0.0.2:1234)", "the run was interrupted"} {
		if !strings.Contains(page, w) {
			t.Errorf("wanted %q in the page, got:\n%s", w, page)
		}
	}
}

func TestRenderTriage(t *testing.T) {
	hostile := "</td><script>alert(1)</script>"
	tr := Triage{Session: "s1", Head: "abc123", Base: "def456", Files: []TriageFile{
		{File: "tests/fast/test_x.py", Decision: triage.Decision{Verdict: triage.Regression, Final: true, Counts: triage.Counts{HeadFail: 3, BasePass: 3}, Reason: "fails at the head every time and passes at the base"},
			Attempts: []TriageAttempt{
				{Attempt: triage.Attempt{Side: triage.Head, N: 1, Outcome: triage.Fail, DurationS: 41.2, Log: "/tmp/out/tests__fast__test_x/head-1/run.log", Reason: hostile}, Dir: "tests__fast__test_x/head-1"},
				{Attempt: triage.Attempt{Side: triage.Base, N: 1, Outcome: triage.Pass, DurationS: 39.8, Log: "/tmp/out/tests__fast__test_x/base-1/run.log"}, Dir: "tests__fast__test_x/base-1"},
			}},
		{File: "tests/fast/test_y.py", Decision: triage.Decision{Verdict: triage.NotReproduced, Final: true, Counts: triage.Counts{HeadPass: 3}},
			Attempts: []TriageAttempt{{Attempt: triage.Attempt{Side: triage.Head, N: 1, Outcome: triage.CannotRun, Reason: "the engine refused it"}}}},
	}}
	got, err := RenderTriage(tr)
	if err != nil {
		t.Fatal(err)
	}
	page := string(got)
	for _, w := range []string{`data-verdict="failed"`, `<table id="verdicts">`, "tests/fast/test_x.py", "regression", "0 pass / 3 fail", "3 pass / 0 fail",
		"head #1", "41.2 s", `<a href="tests__fast__test_x/head-1/run.log">run.log</a>`, "not-reproduced", "not run", "the engine refused it",
		"&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;", "def456"} {
		if !strings.Contains(page, w) {
			t.Errorf("wanted %q in the page, got:\n%s", w, page)
		}
	}
	if strings.Contains(page, hostile) {
		t.Errorf("wanted the attempt's reason escaped, got:\n%s", page)
	}
	if x := external.FindString(page); x != "" {
		t.Errorf("wanted no reference outside the page, got %q in:\n%s", x, page)
	}
}

func TestRenderStage(t *testing.T) {
	log := "::group::tests/e2e/a.py  (1/2 est=5s attempt=1)\nTraceback:\n</pre><script>alert(1)</script>\nModuleNotFoundError: No module named 'torch'\n::endgroup::\n[1/2] tests/e2e/a.py  FAIL  elapsed=3s\n" +
		"::group::tests/e2e/b.py  (2/2 est=5s attempt=1)\nok\n::endgroup::\n[2/2] tests/e2e/b.py  PASS  elapsed=2s\n"
	failed := report.Summary{HW: "cuda", Suite: "stage-c-4-gpu-h200", Shard: &policy.Partition{ID: 1, Size: 4}, Cadence: "regular", Image: "radixark/miles:dev",
		Verdict: report.Failed, ExitCode: 255, Tests: []report.TestResult{
			{File: "tests/e2e/a.py", Status: report.Fail, Attempts: 1, ElapsedS: 3, EstTime: 5},
			{File: "tests/e2e/b.py", Status: report.Pass, Attempts: 1, ElapsedS: 2}}}
	// A run that stopped at its first file: the second never started, and
	// says so without a tail; the disabled file is listed with its reason.
	stopped := failed
	stopped.Tests = []report.TestResult{failed.Tests[0], {File: "tests/e2e/b.py", Status: report.NotRun}}
	stopped.Skipped = []policy.SkippedTest{{File: "tests/e2e/off.py", Reason: "FIXME: <b>broken</b>"}}
	passed := failed
	passed.Verdict, passed.Passed, passed.ExitCode = report.Passed, true, 0
	passed.Tests = []report.TestResult{failed.Tests[1]}
	for _, tc := range []struct {
		name          string
		s             report.Summary
		want, wantNot []string
	}{
		{"a failed shard", failed, []string{`data-verdict="failed"`, "stage-c-4-gpu-h200 shard 2/4", "failed (exit 255)", "--gpus 0,1",
			"Traceback:\n&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;\nModuleNotFoundError: No module named &#39;torch&#39;</pre>", `<a href="run.log">run.log</a>`,
			`<table id="tests">`, "5 s"}, []string{"<script>", "\nok\n"}},
		{"a shard that stopped", stopped, []string{"<code>tests/e2e/a.py</code> <span class=\"verdict failed\">fail</span>",
			"Never started, as the run stopped after tests/e2e/a.py failed:", "<li><code>tests/e2e/b.py</code></li>",
			"<li><code>tests/e2e/off.py</code>: FIXME: &lt;b&gt;broken&lt;/b&gt;</li>"}, []string{"<code>tests/e2e/b.py</code> <span"}},
		{"a passed shard", passed, []string{`data-verdict="passed"`, "passed (exit 0)", "tests/e2e/b.py", "1 file, 2.0 s of tests"}, []string{`class="tail"`, "1 files"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RenderStage(Stage{Summary: tc.s, Log: log, Where: "--gpus 0,1"})
			if err != nil {
				t.Fatal(err)
			}
			checkPage(t, string(got), tc.want, tc.wantNot)
		})
	}
}

func TestRenderCITimeline(t *testing.T) {
	c := passedRun()
	r := c.Report
	t0 := time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC)
	at := func(s float64) *time.Time { x := t0.Add(time.Duration(s * float64(time.Second))); return &x }
	r.Start = &t0
	r.Jobs[0].Start, r.Jobs[0].Duration = at(0), 0.2
	r.Jobs[1].Start, r.Jobs[1].Duration = at(0.2), 12.5
	r.Jobs[2].Reused = false
	r.Jobs[2].Start, r.Jobs[2].Duration = at(0.2), 3
	gpu := &r.Jobs[3]
	gpu.Start, gpu.Duration, gpu.Substituted, gpu.Reason = at(12.7), 30, "", `<b>"quoted"</b>`
	gpu.Key = `pr-test/stage-b-2-gpu-h200<script>`
	fleet := []timeline.Devices{{Model: "h200", IDs: []string{"0", "1", "2", "3", "4", "5", "6", "7"}}}
	f := timeline.Compute(tasksOf(r, fleet), []timeline.Job{{ID: "pr-test/policy"}, {ID: "pr-test/stage-a-cpu", Needs: []string{"pr-test/policy"}},
		{ID: gpu.Key, Needs: []string{"pr-test/policy", "pr-test/stage-a-cpu"}}}, fleet)
	r.Timeline = &f
	page, err := RenderCI(c)
	if err != nil {
		t.Fatal(err)
	}
	checkPage(t, string(page), []string{`<h2>Where the time went</h2>`, `<svg id="timeline"`,
		"span 43 s, lower bound 43 s (H200 60 GPU-s over 8 devices = 7.5 s; critical path 43 s; critical path binds): 1.00x",
		`<text x="4" y="35">H200 0</text>`, `<text x="4" y="179">CPU 1</text>`, `<text x="4" y="197">CPU 2</text>`, `<text x="4" y="215">miles-ci</text>`,
		`class="bound"`, "pr-test/stage-b-2-gpu-h200&lt;script&gt;: passed, 12.7 s to 42.7 s (30.0 s)"},
		[]string{"<script>"})
}

// tasksOf are the report's tasks on fleet, before its figures are made.
func tasksOf(r *cirun.Report, fleet []timeline.Devices) []timeline.Task {
	r.Timeline = &timeline.Figures{Fleet: fleet}
	return r.Tasks()
}

// TestPageTextIsPrintable: a job's reason and a triage's read from a
// results folder show on the page as one line of text, their controls
// escaped (issue 38: one way out, report.html too).
func TestPageTextIsPrintable(t *testing.T) {
	rep := &cirun.Report{Jobs: []cirun.JobReport{{Key: "pr-test/policy", Kind: cirun.KindPolicy, State: cirun.Passed, Reason: "a\u202eb\x1b[2J\nc", Needs: []string{}}}}
	page, err := RenderCI(CI{Report: rep, Mask: func(s string) string { return s }})
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(string(page), "\u202e\x1b") || !strings.Contains(string(page), `a\u202eb\x1b[2J\nc`) {
		t.Errorf("wanted the reason escaped on the page, got\n%s", page)
	}
}
