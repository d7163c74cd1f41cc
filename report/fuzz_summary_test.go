package report

import (
	"strings"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

// FuzzSummarize feeds arbitrary status lines, JUnit reports and logs
// through Summarize and checks the one property a forger must never break:
// a run that passed has exit code 0, every planned file a pass and no
// inconsistency.
func FuzzSummarize(f *testing.F) {
	f.Add("[1/2] tests/e2e/a.py  PASS  elapsed=1s\n[2/2] tests/e2e/b.py  PASS  elapsed=1s", []byte(pytestJUnit),
		"tests/fast/test_loss.py::test_ok PASSED\n", 0, false)
	f.Add("[1/2] tests/e2e/a.py  FAIL  elapsed=1s exit=1\n[1/2] tests/e2e/a.py  PASS  elapsed=1s retry_of=attempt=1", []byte("<testsuites"),
		"_ ERROR collecting tests/fast/test_x.py _\n", 255, true)
	f.Fuzz(func(t *testing.T, status string, junit []byte, log string, code int, cpu bool) {
		code &= 255
		in := Input{HW: policy.ROCM, Suite: "s", MaxAttempts: 2, Log: log,
			Tests: []Expected{{File: "tests/e2e/a.py"}, {File: "tests/e2e/b.py"}},
			Run:   RunRecord{Ending: Exited, ExitCode: code, StatusLines: strings.Split(status, "\n")}}
		if cpu {
			in.HW = policy.CPU
			in.Tests = []Expected{{File: "tests/fast/test_loss.py"}, {File: "tests/fast/test_x.py"}}
			if cases, err := ParseJUnit(junit); err == nil {
				in.JUnit, in.HaveJUnit = cases, true
			} else {
				in.JUnitProblem = err.Error()
			}
		}
		s := Summarize(in)
		if !s.Passed {
			if s.ExitStatus() == 0 {
				t.Fatalf("a failed run exits 0: %+v", s)
			}
			return
		}
		if s.ExitCode != 0 || s.Verdict != Passed || len(s.Inconsistent) > 0 || s.ExitStatus() != 0 {
			t.Fatalf("a pass with exit %d, verdict %s, %q", s.ExitCode, s.Verdict, s.Inconsistent)
		}
		for _, r := range s.Tests {
			if r.Status != Pass {
				t.Fatalf("a pass with %s %s", r.File, r.Status)
			}
		}
	})
}
