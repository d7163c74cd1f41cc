package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

func TestParseStatusLines(t *testing.T) {
	log := strings.Join([]string{
		"::group::tests/e2e/a.py  (1/3 est=60s attempt=1)",
		"[1/3] tests/e2e/a.py  PASS  elapsed=61s",
		"[2/3] tests/e2e/b.py  FAIL  elapsed=12s exit=1",
		"[2/3] tests/e2e/b.py  PASS  elapsed=10s retry_of=attempt=1",
		"[3/3] tests/e2e/c d.py  TIMEOUT  elapsed=1800s timeout_after=1800s",
		"[4/3] tests/e2e/x.py  PASS  elapsed=1s trailing",      // not a full match
		"[1/1] tests/e2e/\\nnl.py  FAIL  elapsed=0s exit=-9\r", // escaped newline, CRLF
		"a test printing [1/3] something",
	}, "\n")
	got, err := ParseStatusLines(log)
	if err != nil {
		t.Fatal(err)
	}
	one, minus9, t1800 := 1, -9, 1800
	want := []StatusLine{
		{Index: 1, Total: 3, File: "tests/e2e/a.py", Status: Pass, ElapsedS: 61},
		{Index: 2, Total: 3, File: "tests/e2e/b.py", Status: Fail, ElapsedS: 12, Exit: &one},
		{Index: 2, Total: 3, File: "tests/e2e/b.py", Status: Pass, ElapsedS: 10, RetryOf: 1},
		{Index: 3, Total: 3, File: "tests/e2e/c d.py", Status: Timeout, ElapsedS: 1800, TimeoutAfter: &t1800},
		{Index: 1, Total: 1, File: "tests/e2e/\nnl.py", Status: Fail, Exit: &minus9},
	}
	if fmt.Sprint(lines(got)) != fmt.Sprint(lines(want)) {
		t.Fatalf("wanted\n%v\ngot\n%v", lines(want), lines(got))
	}
}

func lines(ls []StatusLine) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Line())
	}
	return out
}

func FuzzParseStatusLines(f *testing.F) {
	f.Add("[1/2] tests/a.py  FAIL  elapsed=3s exit=1 timeout_after=4s retry_of=attempt=1\n")
	f.Add("[99999999999/1] x  PASS  elapsed=1s")
	f.Fuzz(func(t *testing.T, log string) {
		got, err := ParseStatusLines(log)
		if err != nil {
			return
		}
		for _, l := range got {
			again, _ := ParseStatusLines(l.Line())
			if len(again) != 1 || again[0].Line() != l.Line() {
				t.Fatalf("line %q does not read back", l.Line())
			}
		}
	})
}

// TestParseListOnly reads the plans miles-ci renders (the same text as
// run_suite.py --list-only) back to their enabled files.
func TestParseListOnly(t *testing.T) {
	reg, err := policy.LoadRegistry("../testdata/miles")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range policy.Roster() {
		for _, cadence := range []policy.Cadence{policy.Regular, policy.Weekly} {
			p, err := policy.BuildPlan(reg, policy.PlanRequest{HW: st.Backend, Suite: st.Name, Cadence: cadence})
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseListOnly(p.Text())
			if err != nil {
				t.Fatalf("%s %s: %v", st.Name, cadence, err)
			}
			var want []string
			for _, e := range p.Enabled {
				want = append(want, e.File)
			}
			if !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Errorf("%s %s: wanted %v, got %v", st.Name, cadence, want, got)
			}
		}
	}
	if _, err := ParseListOnly("Traceback (most recent call last):\n"); err == nil ||
		err.Error() != `plan output has neither an "Enabled N test(s)" nor a "No tests found" line; is this run_suite.py --list-only output?` {
		t.Errorf("wanted an error for output that is not a plan, got %v", err)
	}
}

func FuzzParseListOnly(f *testing.F) {
	f.Add("Enabled 1 test(s) (est total 1s):\n  - tests/a.py (est_time=1.0s) [implicit]\n")
	f.Add("No tests found for hw=CPU, suite=s, cadence=regular\n")
	f.Fuzz(func(t *testing.T, text string) {
		files, err := ParseListOnly(text)
		if err == nil && files == nil {
			t.Fatalf("nil files without an error")
		}
	})
}

func TestCheckPlan(t *testing.T) {
	if err := CheckPlan([]string{"a", "b"}, []string{"a", "b"}); err != nil {
		t.Fatalf("wanted equal plans to pass, got %v", err)
	}
	want := "plan drift: the checkout's run_suite.py --list-only and miles-ci plan different files for this shard; update miles-ci's tables or the checkout's tests/ci so they agree\n" +
		"run_suite.py --list-only in the container (2):\n    a\n  * c\nmiles-ci plan (2):\n    a\n  * b\n(* = only in one list)"
	if err := CheckPlan([]string{"a", "c"}, []string{"a", "b"}); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}

const pytestJUnit = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4" time="0.9">
<testcase classname="tests.fast.test_loss" name="test_ok" time="0.25" />
<testcase classname="tests.fast.test_loss.TestClip" name="test_clip" time="0.5"><failure message="assert 1 == 2">boom</failure></testcase>
<testcase classname="tests.fast.test_lossy" name="test_other" time="0.1" />
<testcase classname="tests.fast.test_skip" name="test_s" time="0.0"><skipped message="no gpu" /></testcase>
</testsuite></testsuites>`

func TestSummarizeCPU(t *testing.T) {
	cases, err := ParseJUnit([]byte(pytestJUnit))
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(Input{HW: policy.CPU, Suite: "stage-b-cpu", Cadence: policy.Regular, Image: "python:3.11", Run: RunRecord{Ending: Exited, ExitCode: 1},
		Tests: []Expected{{File: "tests/fast/test_loss.py"}, {File: "tests/fast/test_lossy.py"}, {File: "tests/fast/test_skip.py"}, {File: "tests/fast/test_z.py"}},
		JUnit: cases, HaveJUnit: true})
	got := []string{}
	for _, tr := range s.Tests {
		got = append(got, fmt.Sprintf("%s %s %g", tr.File, tr.Status, tr.ElapsedS))
	}
	want := []string{"tests/fast/test_loss.py fail 0.75", "tests/fast/test_lossy.py pass 0.1", "tests/fast/test_skip.py pass 0", "tests/fast/test_z.py not-run 0"}
	if !slices.Equal(got, want) {
		t.Errorf("wanted %v, got %v", want, got)
	}
	if err := s.Err(); err == nil || err.Error() != "stage-b-cpu failed with exit code 1: tests/fast/test_loss.py (fail); not run: tests/fast/test_z.py; see results/run.log" {
		t.Errorf("wanted the failed and not-run files named, got %v", err)
	}
}

func TestParseJUnitErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "junit.xml is empty"},
		{"<testsuites><testcase", "junit.xml: XML syntax error on line 1: unexpected EOF"},
	} {
		if _, err := ParseJUnit([]byte(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("wanted %q, got %v", tc.want, err)
		}
	}
}

func FuzzParseJUnit(f *testing.F) {
	f.Add([]byte(pytestJUnit))
	f.Add([]byte(`<testsuite><testsuite><testcase file="a.py"/></testsuite></testsuite>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ParseJUnit(data)
	})
}

// TestSummarizeGPU checks a GPU shard: a retry counts attempts, a timeout
// keeps its timeout, and files after a fail-fast stop are not run.
func TestSummarizeGPU(t *testing.T) {
	lines := []string{
		"[1/4] tests/e2e/a.py  FAIL  elapsed=20s exit=1",
		"[1/4] tests/e2e/a.py  PASS  elapsed=30s retry_of=attempt=1",
		"[2/4] tests/e2e/b.py  TIMEOUT  elapsed=2400s timeout_after=2400s",
		"[3/4] tests/e2e/c.py  FAIL  elapsed=4s exit=-9",
	}
	t2400 := 2400
	s := Summarize(Input{HW: policy.ROCM, Suite: "stage-c-4-gpu-mi350", Shard: &policy.Partition{ID: 0, Size: 2}, Cadence: policy.Regular,
		Image: "rocm/sgl-dev:miles-rocm720-mi35x", Run: RunRecord{Ending: Exited, ExitCode: 255, StatusLines: lines},
		ContinueOnError: true, MaxAttempts: 2,
		Tests:   []Expected{{"tests/e2e/a.py", &t2400}, {"tests/e2e/b.py", &t2400}, {"tests/e2e/c.py", &t2400}, {"tests/e2e/d.py", &t2400}},
		Skipped: []policy.SkippedTest{{File: "tests/e2e/e.py", Reason: "FIXME"}}})
	wantText := `stage-c-4-gpu-mi350 shard 1/2 (rocm, rocm/sgl-dev:miles-rocm720-mi35x, cadence regular): FAILED (exit code 255)
  PASS     tests/e2e/a.py  50s  (2 attempts)
  TIMEOUT  tests/e2e/b.py  2400s  timeout after 2400s
  FAIL     tests/e2e/c.py  4s  exit -9
  NOT-RUN  tests/e2e/d.py
  SKIPPED  tests/e2e/e.py  (FIXME)
`
	if s.Text() != wantText {
		t.Errorf("wanted\n%s\ngot\n%s", wantText, s.Text())
	}
	wantErr := "stage-c-4-gpu-mi350 shard 1/2 failed with exit code 255: tests/e2e/b.py (timeout after 2400s), tests/e2e/c.py (exit -9); not run: tests/e2e/d.py; see results/run.log"
	if err := s.Err(); err == nil || err.Error() != wantErr {
		t.Errorf("wanted %q, got %v", wantErr, err)
	}
	junit := string(JUnit(s))
	for _, want := range []string{
		`<testsuite name="stage-c-4-gpu-mi350 shard 1/2" tests="5" failures="2" errors="0" skipped="2" time="2454">`,
		`<testcase classname="stage-c-4-gpu-mi350" name="tests/e2e/c.py" time="4">`,
		`<failure message="exit -9"></failure>`,
		`<skipped message="not run: the suite stopped before this file"></skipped>`,
		`<skipped message="disabled: FIXME"></skipped>`,
	} {
		if !strings.Contains(junit, want) {
			t.Errorf("wanted %q in\n%s", want, junit)
		}
	}
	if cases, err := ParseJUnit(JUnit(s)); err != nil || len(cases) != 5 {
		t.Errorf("wanted the written JUnit to read back with 5 cases, got %d (%v)", len(cases), err)
	}
}

// TestSummarizeGPUWithoutStatusLines: a GPU run whose runner printed no
// per-file line says so, whatever its exit code; a CPU run does not.
func TestSummarizeGPUWithoutStatusLines(t *testing.T) {
	t1800 := 1800
	const want = "run_suite.py printed no per-file status line ([i/n] FILE PASS|FAIL|TIMEOUT, with GITHUB_ACTIONS=true), so no file has an outcome of its own; see run.log"
	for _, code := range []int{0, 255} {
		s := Summarize(Input{HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", Cadence: policy.Regular, Run: RunRecord{Ending: Exited, ExitCode: code},
			Tests: []Expected{{"tests/e2e/a.py", &t1800}}})
		if len(s.Notes) != 1 || s.Notes[0] != want || s.Tests[0].Status != NotRun {
			t.Errorf("exit %d: wanted the file not-run and the note %q, got %+v", code, want, s)
		}
		if !strings.Contains(s.Text(), want) {
			t.Errorf("exit %d: wanted the note in the text, got\n%s", code, s.Text())
		}
	}
	empty := Summarize(Input{HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", Cadence: policy.Regular})
	if len(empty.Notes) != 0 {
		t.Errorf("a shard with nothing planned needs no note, got %q", empty.Notes)
	}
}

// TestSummarizeFileRun checks single-file outcomes from the run record: only
// miles-ci's timer makes TIMEOUT, exit 124 is an exit status, and a signal
// is "killed by signal N".
func TestSummarizeFileRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		run    RunRecord
		want   Status
		detail string
		exit   int
	}{
		{"pass", RunRecord{Ending: Exited}, Pass, "pass", 0},
		{"fail", RunRecord{Ending: Exited, ExitCode: 1}, Fail, "exit 1", 1},
		{"exit 124 is an exit code", RunRecord{Ending: Exited, ExitCode: 124}, Fail, "exit 124", 124},
		{"SIGKILL (the OOM killer)", RunRecord{Ending: Signaled, Signal: 9}, Fail, "killed by signal 9", 137},
		{"miles-ci's timer", RunRecord{Ending: TimedOut, TimeoutS: 1800}, Timeout, "timeout after 1800s", 124},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run.ElapsedS = 9
			s := Summarize(Input{HW: policy.CUDA, Suite: "stage-b-2-gpu-h200", File: "tests/e2e/a.py", Run: tc.run,
				Tests: []Expected{{File: "tests/e2e/a.py", TimeoutS: intPtr(1800)}}})
			got := s.Tests[0]
			if got.Status != tc.want || got.detail() != tc.detail || got.ElapsedS != 9 || s.Passed != (tc.want == Pass) || s.ExitStatus() != tc.exit {
				t.Errorf("wanted %s (%s), exit %d, got %+v (%s), exit %d", tc.want, tc.detail, tc.exit, got, got.detail(), s.ExitStatus())
			}
		})
	}
}

// TestMaskingWriter checks a secret split over writes, and a long line
// without end, are masked on the way through (issue 22, case 8).
func TestMaskingWriter(t *testing.T) {
	const secret = "wandb-secret-0123456789"
	m, err := NewMasker(map[string]string{"WANDB_API_KEY": secret})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w := NewMaskingWriter(&b, m)
	for _, part := range []string{"step 1: wandb-sec", "ret-0123456789 ok\nnext ", strings.Repeat("y", 70<<10), secret, " end"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), secret) || !strings.HasPrefix(b.String(), "step 1: *** ok\nnext ") || !strings.HasSuffix(b.String(), "y***"+" end") {
		t.Errorf("wanted every copy masked, got %q...", b.String()[:40])
	}
}

// TestReadListOnly reads the plans miles-ci renders back whole: the policy
// and hardware lines, the skipped and enabled blocks (labels are not
// printed), as the checkout planner reads the checkout's own.
func TestReadListOnly(t *testing.T) {
	reg, err := policy.LoadRegistry("../testdata/miles")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range policy.Roster() {
		t.Run(st.Name, func(t *testing.T) {
			req := policy.PlanRequest{HW: st.Backend, Suite: st.Name, Cadence: policy.Nightly, Labels: []string{"run-ci-megatron"}}
			if st.Shards > 1 {
				req.Partition = &policy.Partition{ID: 1, Size: st.Shards}
			}
			want, err := policy.BuildPlan(reg, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadListOnly(want.Text())
			if err != nil {
				t.Fatal(err)
			}
			if got.Text() != want.Text() {
				t.Errorf("wanted the plan read back to print the same:\n%s\ngot\n%s", want.Text(), got.Text())
			}
			if got.Cadence != want.Cadence || got.Suite != want.Suite || got.HW != want.HW || len(got.Skipped) != len(want.Skipped) {
				t.Errorf("wanted %s %s %s with %d skipped, got %s %s %s with %d", want.Cadence, want.HW, want.Suite, len(want.Skipped), got.Cadence, got.HW, got.Suite, len(got.Skipped))
			}
		})
	}
	if _, err := ReadListOnly("Policy: cadence=regular\nEnabled 0 test(s)\n"); errText(err) != `run_suite.py --list-only output line 1 ("Policy: cadence=regular") is not Policy: cadence='C' bypass_fastfail=B include_labels=[...]` {
		t.Errorf("wanted the policy line refused, got %v", err)
	}
}

// TestReadListOnlyUntrustedReasons: a skip reason is the test's own text,
// printed raw; a newline, a nested "(reason: " or a forged item in it
// stays in the reason.
func TestReadListOnlyUntrustedReasons(t *testing.T) {
	text := "Skipped 2 test(s):\n" +
		"  - tests/e2e/a.py (reason: flaky\n::error file=x::forged (reason: no)\n  - tests/e2e/forged.py (est_time=1s))\n" +
		"  - tests/e2e/b.py (reason: plain)\n\nEnabled 1 test(s) (est total 30s):\n  - tests/e2e/c.py (est_time=30.0s)\n"
	p, err := ReadListOnly(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []policy.SkippedTest{
		{File: "tests/e2e/a.py", Reason: "flaky\n::error file=x::forged (reason: no)\n  - tests/e2e/forged.py (est_time=1s)"},
		{File: "tests/e2e/b.py", Reason: "plain"},
	}
	if fmt.Sprint(p.Skipped) != fmt.Sprint(want) || len(p.Enabled) != 1 || p.Enabled[0].File != "tests/e2e/c.py" {
		t.Errorf("wanted skipped %q and enabled c.py, got %q and %v", want, p.Skipped, p.Enabled)
	}
	// A reason of 400,000 lines is read in one pass (no copy per line).
	long := "Skipped 1 test(s):\n  - tests/e2e/a.py (reason: " + strings.Repeat("x\n", 400000) + ")\n\nEnabled 0 test(s)\n"
	if p, err := ReadListOnly(long); err != nil || len(p.Skipped) != 1 || len(p.Skipped[0].Reason) != 800000 {
		t.Errorf("wanted the long reason read, got %v", err)
	}
	// A reason never closed swallows the rest: no plan at all, refused.
	if _, err := ReadListOnly("Skipped 1 test(s):\n  - tests/e2e/a.py (reason: never closed\nEnabled 0 test(s)\n"); err == nil {
		t.Errorf("wanted an unclosed reason refused")
	}
	if _, err := ReadListOnly("Skipped 1 test(s):\n  - tests/e2e/a.py (reason: never closed"); !strings.Contains(errText(err), "closed by a ) on a later line") {
		t.Errorf("wanted an unclosed reason at the end refused, got %v", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
