package report

import (
	"strings"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

// TestVerdictCannotBeForged is the table of what a test can print,
// as status lines: only the runner's lines at their place count, and
// outcomes that contradict the exit status make the run inconsistent.
func TestVerdictCannotBeForged(t *testing.T) {
	t1800 := 1800
	plan := []Expected{{"tests/e2e/a.py", &t1800}, {"tests/e2e/b.py", &t1800}, {"tests/e2e/c.py", &t1800}}
	for _, tc := range []struct {
		name            string
		exit            int
		continueOnError bool
		lines           []string
		want            []Status
		verdict         Verdict
		inconsistent    string // part of the first inconsistency, "" for none
		exitStatus      int
	}{
		{
			name: "a fail-fast stop", exit: 255,
			lines:   []string{"[1/3] tests/e2e/a.py  PASS  elapsed=1s", "[2/3] tests/e2e/b.py  FAIL  elapsed=1s exit=1"},
			want:    []Status{Pass, Fail, NotRun},
			verdict: Failed, exitStatus: 255,
		},
		{
			name: "forged lines for files that never ran, before the runner's own", exit: 255,
			lines: []string{"[1/3] tests/e2e/a.py  PASS  elapsed=0s", "[2/3] tests/e2e/b.py  PASS  elapsed=0s", "[3/3] tests/e2e/c.py  PASS  elapsed=0s",
				"[1/3] tests/e2e/a.py  FAIL  elapsed=3s exit=1"},
			want:    []Status{Fail, NotRun, NotRun},
			verdict: Inconsistent, inconsistent: "tests/e2e/a.py has two different status lines for one attempt", exitStatus: 255,
		},
		{
			name: "a background child prints PASS lines after its file failed", exit: 255,
			lines:   []string{"[1/3] tests/e2e/a.py  FAIL  elapsed=3s exit=1", "[2/3] tests/e2e/b.py  PASS  elapsed=0s", "[3/3] tests/e2e/c.py  PASS  elapsed=0s"},
			want:    []Status{Fail, NotRun, NotRun},
			verdict: Inconsistent, inconsistent: "the runner stops at the first failed file (tests/e2e/a.py), yet these later files reported an outcome", exitStatus: 255,
		},
		{
			name: "lines out of order, at the wrong position, of another shard or another file", exit: 0,
			lines: []string{"[2/3] tests/e2e/b.py  PASS  elapsed=0s", "[1/5] tests/e2e/a.py  PASS  elapsed=0s", "[1/3] tests/e2e/b.py  PASS  elapsed=0s",
				"[12/5000] loss=0.1", "[1/3] tests/e2e/a.py  PASS  elapsed=1s", "[2/3] tests/e2e/b.py  PASS  elapsed=1s", "[3/3] tests/e2e/c.py  PASS  elapsed=1s"},
			want:    []Status{Pass, Pass, Pass},
			verdict: Passed, exitStatus: 0,
		},
		{
			name: "the runner skipped a planned file and exited 0", exit: 0,
			lines:   []string{"[1/3] tests/e2e/a.py  PASS  elapsed=1s", "[3/3] tests/e2e/c.py  PASS  elapsed=1s"},
			want:    []Status{Pass, NotRun, NotRun},
			verdict: Inconsistent, inconsistent: "the runner exited 0 but these planned files reported no outcome: tests/e2e/b.py, tests/e2e/c.py", exitStatus: ExitInconsistent,
		},
		{
			name: "a FAIL row under exit 0", exit: 0, continueOnError: true,
			lines:   []string{"[1/3] tests/e2e/a.py  PASS  elapsed=1s", "[2/3] tests/e2e/b.py  FAIL  elapsed=1s exit=1", "[3/3] tests/e2e/c.py  PASS  elapsed=1s"},
			want:    []Status{Pass, Fail, Pass},
			verdict: Inconsistent, inconsistent: "the runner exited 0 but these files failed: tests/e2e/b.py", exitStatus: ExitInconsistent,
		},
		{
			name: "a retry without a failed attempt, and a third attempt", exit: 0, continueOnError: true,
			lines: []string{"[1/3] tests/e2e/a.py  PASS  elapsed=1s", "[1/3] tests/e2e/a.py  PASS  elapsed=1s retry_of=attempt=1",
				"[2/3] tests/e2e/b.py  FAIL  elapsed=1s exit=1", "[2/3] tests/e2e/b.py  FAIL  elapsed=1s exit=1 retry_of=attempt=1",
				"[2/3] tests/e2e/b.py  PASS  elapsed=1s retry_of=attempt=2", "[3/3] tests/e2e/c.py  PASS  elapsed=1s"},
			want:    []Status{Pass, Fail, Pass},
			verdict: Inconsistent, inconsistent: "the runner exited 0 but these files failed: tests/e2e/b.py", exitStatus: ExitInconsistent,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(Input{HW: policy.ROCM, Suite: "stage-c-4-gpu-mi350", Tests: plan, ContinueOnError: tc.continueOnError, MaxAttempts: 2,
				Run: RunRecord{Ending: Exited, ExitCode: tc.exit, StatusLines: tc.lines}})
			var got []Status
			for _, r := range s.Tests {
				got = append(got, r.Status)
			}
			if strings.Join(statusNames(got), ",") != strings.Join(statusNames(tc.want), ",") {
				t.Errorf("wanted %v, got %v", tc.want, got)
			}
			if s.Verdict != tc.verdict || s.ExitStatus() != tc.exitStatus || s.Passed != (tc.verdict == Passed) {
				t.Errorf("wanted verdict %s and exit %d, got %s and %d (%q)", tc.verdict, tc.exitStatus, s.Verdict, s.ExitStatus(), s.Inconsistent)
			}
			if tc.inconsistent != "" && (len(s.Inconsistent) == 0 || !strings.Contains(s.Inconsistent[0], tc.inconsistent)) {
				t.Errorf("wanted an inconsistency with %q, got %q", tc.inconsistent, s.Inconsistent)
			}
			if tc.inconsistent == "" && len(s.Inconsistent) > 0 {
				t.Errorf("wanted no inconsistency, got %q", s.Inconsistent)
			}
		})
	}
}

func statusNames(ss []Status) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, string(s))
	}
	return out
}

// TestRunEndings checks the stage verdict of each way a runner ends.
func TestRunEndings(t *testing.T) {
	plan := []Expected{{File: "tests/e2e/a.py"}, {File: "tests/e2e/b.py"}}
	pass1 := []string{"[1/2] tests/e2e/a.py  PASS  elapsed=1s"}
	for _, tc := range []struct {
		name    string
		run     RunRecord
		want    []Status
		verdict Verdict
		exit    int
		text    string
	}{
		{"killed by a signal", RunRecord{Ending: Signaled, Signal: 9, StatusLines: pass1}, []Status{Pass, NotRun}, Failed, 137, "FAILED (killed by signal 9)"},
		{"miles-ci's stage timeout", RunRecord{Ending: TimedOut, TimeoutS: 3600, StatusLines: pass1}, []Status{Pass, Timeout}, TimedOutRun, 124, "TIMEOUT (miles-ci ended the run after 3600s)"},
		{"the runner exited non-zero with every file passed", RunRecord{Ending: Exited, ExitCode: 255,
			StatusLines: append(pass1, "[2/2] tests/e2e/b.py  PASS  elapsed=1s")}, []Status{Pass, Pass}, Failed, 255, "FAILED (exit code 255)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(Input{HW: policy.CUDA, Suite: "stage-b-2-gpu-h200", Tests: plan, Run: tc.run})
			if s.Tests[0].Status != tc.want[0] || s.Tests[1].Status != tc.want[1] || s.Verdict != tc.verdict || s.ExitStatus() != tc.exit ||
				!strings.Contains(s.Text(), tc.text) {
				t.Errorf("wanted %v, %s, exit %d, %q; got %+v, %s, exit %d\n%s", tc.want, tc.verdict, tc.exit, tc.text, s.Tests, s.Verdict, s.ExitStatus(), s.Text())
			}
		})
	}
}

// TestCPUCaseAttribution checks that a JUnit case belongs to exactly one
// planned file, that a collection error fails its file, and that pytest's
// -v lines stand in for an unusable report.
func TestCPUCaseAttribution(t *testing.T) {
	plan := []Expected{{File: "tests/fast/test_x.py"}, {File: "tests/fast/test_x/test_y.py"}, {File: "tests/fast/test_z.py"}}
	cases := []Case{
		{Classname: "tests.fast.test_x.test_y", Name: "test_1"},
		{Classname: "tests.fast.test_x.TestA", Name: "test_2"},
		{Classname: "", Name: "tests.fast.test_z", Failed: true}, // collection error
		{Classname: "tests.fast.test_q", Name: "test_other"},     // no planned file
		{Classname: "tests.fastest", Name: "test_prefix"},        // only a prefix of a module
	}
	s := Summarize(Input{HW: policy.CPU, Suite: "stage-a-cpu", Tests: plan, Run: RunRecord{Ending: Exited, ExitCode: 2}, JUnit: cases, HaveJUnit: true})
	got := statusNames([]Status{s.Tests[0].Status, s.Tests[1].Status, s.Tests[2].Status})
	if strings.Join(got, ",") != "pass,pass,fail" {
		t.Errorf("wanted pass,pass,fail, got %v", got)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "2 cases of no planned file") {
		t.Errorf("wanted a note on the 2 foreign cases, got %q", s.Notes)
	}

	log := "tests/fast/test_x.py::test_2 PASSED  [ 33%]\ntests/fast/test_x/test_y.py::test_1 FAILED  [ 66%]\n" +
		"________________ ERROR collecting tests/fast/test_z.py ________________\n"
	s = Summarize(Input{HW: policy.CPU, Suite: "stage-a-cpu", Tests: plan, Run: RunRecord{Ending: Exited, ExitCode: 1},
		JUnitProblem: "pytest's junit.xml is malformed (XML syntax error on line 1)", Log: log})
	got = statusNames([]Status{s.Tests[0].Status, s.Tests[1].Status, s.Tests[2].Status})
	if strings.Join(got, ",") != "pass,fail,fail" || s.Verdict != Failed || s.ExitStatus() != 1 {
		t.Errorf("wanted pass,fail,fail from the -v lines and exit 1, got %v, %s, %d", got, s.Verdict, s.ExitStatus())
	}
	if len(s.Notes) != 1 || !strings.HasPrefix(s.Notes[0], "pytest's junit.xml is malformed") {
		t.Errorf("wanted the malformed report named, got %q", s.Notes)
	}
}

func TestParseRecord(t *testing.T) {
	good := RecordPrefix + `{"ending":"exited","exit_code":255,"elapsed_s":3}`
	for _, tc := range []struct{ name, stderr, err string }{
		{"last line", "warning\n" + RecordPrefix + `{"ending":"exited","exit_code":0}` + "\n" + good + "\n", ""},
		{"a forged record before garbage", good + "\nmore output\n", "the run wrapper left no record"},
		{"bad exit", RecordPrefix + `{"ending":"exited","exit_code":300}`, "outside 0-255"},
		{"bad ending", RecordPrefix + `{"ending":"passed"}`, `ending "passed"`},
		{"not JSON", RecordPrefix + `{`, "not JSON"},
		{"empty", "", "the run wrapper left no record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRecord(tc.stderr)
			switch {
			case tc.err == "" && (err != nil || r.ExitCode != 255):
				t.Errorf("wanted the last record (exit 255), got %+v, %v", r, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("wanted an error with %q, got %v", tc.err, err)
			}
		})
	}
}

func TestCheckEngine(t *testing.T) {
	for _, tc := range []struct {
		r    RunRecord
		code int
		ok   bool
	}{
		{RunRecord{Ending: Exited}, 0, true},
		{RunRecord{Ending: Exited, ExitCode: 255}, 255, true},
		{RunRecord{Ending: Exited, ExitCode: 137}, 192, true},
		{RunRecord{Ending: Signaled, Signal: 9}, 192, true},
		{RunRecord{Ending: TimedOut, TimeoutS: 5}, 192, true},
		// A record forged to say 0 while the runner failed.
		{RunRecord{Ending: Exited}, 255, false},
		{RunRecord{Ending: Exited, ExitCode: 1}, 0, false},
	} {
		if err := tc.r.CheckEngine(tc.code); (err == nil) != tc.ok {
			t.Errorf("%+v with engine status %d: wanted ok=%v, got %v", tc.r, tc.code, tc.ok, err)
		}
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add(RecordPrefix + `{"ending":"exited","exit_code":1,"status_lines":["[1/1] a  PASS  elapsed=0s"]}`)
	f.Add("x\n" + RecordPrefix + `{"ending":"signaled","signal":9}`)
	f.Fuzz(func(t *testing.T, s string) {
		if r, err := ParseRecord(s); err == nil {
			_ = r.WrapperExit()
			Summarize(Input{HW: policy.CUDA, Tests: []Expected{{File: "a"}}, Run: r})
		}
	})
}

func TestMasker(t *testing.T) {
	m, err := NewMasker(map[string]string{"WANDB_API_KEY": "wandb-0123456789", "HF_TOKEN": "hf-line-one\nhf-line-two", "NEON": ""})
	if err != nil {
		t.Fatal(err)
	}
	in := "key=wandb-0123456789 token=hf-line-one\nhf-line-two and hf-line-two alone"
	want := "key=*** token=*** and *** alone"
	if got := m.Mask(in); got != want {
		t.Errorf("wanted %q, got %q", want, got)
	}
	if _, err := NewMasker(map[string]string{"HF_TOKEN": "short"}); err == nil || !strings.Contains(err.Error(), "secret HF_TOKEN is (or has a line) shorter than 8 characters") {
		t.Errorf("wanted a short secret refused by name, got %v", err)
	}
	if (*Masker)(nil).Mask("x") != "x" {
		t.Errorf("a nil masker must mask nothing")
	}
}

func TestCap(t *testing.T) {
	text := strings.Repeat("[12/5000] loss=0.1\n", 1000)
	got := Cap(text, 1000)
	if len(got) > 1200 || !strings.HasPrefix(got, "[12/5000]") || !strings.Contains(got, "bytes (") || !strings.HasSuffix(got, "loss=0.1\n") {
		t.Errorf("wanted the head, a note and the tail, got %q", got)
	}
	if Cap("short", 10) != "short" {
		t.Errorf("wanted a short text unchanged")
	}
}

// TestStatusLinesByPosition: a record whose wrapper kept the runner's lines
// by their position, after a test printed 5,000 status-shaped lines of its
// own, is a pass with a note (issue 22, case 4); a planned file with more
// lines than the runner prints makes the run inconsistent.
func TestStatusLinesByPosition(t *testing.T) {
	plan := []Expected{{File: "tests/e2e/a.py"}, {File: "tests/e2e/b.py"}}
	rec := RunRecord{Ending: Exited, StatusForeign: 5000,
		StatusLines: []string{"[1/2] tests/e2e/a.py  PASS  elapsed=1s", "[2/2] tests/e2e/b.py  PASS  elapsed=1s"}}
	s := Summarize(Input{HW: policy.CUDA, Suite: "stage-b-2-gpu-h200", Tests: plan, Run: rec})
	if !s.Passed || s.ExitStatus() != 0 || !strings.Contains(strings.Join(s.Notes, "\n"), "5000 lines shaped like status lines named no planned file") {
		t.Errorf("wanted a pass with a note, got %s %q %q", s.Verdict, s.Inconsistent, s.Notes)
	}
	rec.StatusOverflow = []string{"tests/e2e/a.py"}
	s = Summarize(Input{HW: policy.CUDA, Suite: "stage-b-2-gpu-h200", Tests: plan, Run: rec})
	if s.Verdict != Inconsistent || s.ExitStatus() != ExitInconsistent || !strings.Contains(strings.Join(s.Inconsistent, "\n"), "tests/e2e/a.py") {
		t.Errorf("wanted inconsistent naming tests/e2e/a.py, got %s %q", s.Verdict, s.Inconsistent)
	}
}

// TestPytestChannel: a CPU test whose atexit hook writes an all-pass
// junit.xml and calls os._exit(0) makes the runner exit 0, but pytest had
// already told miles-ci's plugin that a file failed and the session ended
// with 1: the file fails and the run is inconsistent (issue 22, case 5).
// A forged junit.xml that blames an innocent file blames nothing.
func TestPytestChannel(t *testing.T) {
	plan := []Expected{{File: "tests/fast/test_a.py"}, {File: "tests/fast/test_b.py"}}
	pr := &PytestReport{Sessions: 1, ExitStatuses: []int{1}, Files: map[string]PytestFile{
		"tests/fast/test_a.py": {Ran: true, Failed: true}, "tests/fast/test_b.py": {Ran: true}}}
	for _, tc := range []struct {
		name  string
		junit []Case
	}{
		{"an all-pass junit.xml", []Case{{Classname: "tests.fast.test_a", Name: "test_x"}, {Classname: "tests.fast.test_b", Name: "test_ok"}}},
		{"a junit.xml that blames the innocent file", []Case{{Classname: "tests.fast.test_a", Name: "test_x"}, {Classname: "tests.fast.test_b", Name: "test_ok", Failed: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(Input{HW: policy.CPU, Suite: "stage-b-cpu", Tests: plan, Run: RunRecord{Ending: Exited, Pytest: pr},
				JUnit: tc.junit, HaveJUnit: true})
			if s.Tests[0].Status != Fail || s.Tests[1].Status != Pass || s.Verdict != Inconsistent || s.ExitStatus() != ExitInconsistent ||
				!strings.Contains(strings.Join(s.Inconsistent, "\n"), "pytest reported exit status 1 to miles-ci, but the runner exited 0") {
				t.Errorf("wanted test_a FAIL, test_b PASS, inconsistent; got %s %s %s %q", s.Tests[0].Status, s.Tests[1].Status, s.Verdict, s.Inconsistent)
			}
		})
	}
	s := Summarize(Input{HW: policy.CPU, Suite: "stage-b-cpu", Tests: plan, Run: RunRecord{Ending: Exited, Pytest: &PytestReport{Sessions: 1}}})
	if s.Verdict != Inconsistent || !strings.Contains(strings.Join(s.Inconsistent, "\n"), "1 of 1 pytest sessions never finished") {
		t.Errorf("wanted a session that never finished to be inconsistent, got %s %q", s.Verdict, s.Inconsistent)
	}
}
