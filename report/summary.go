package report

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/plural"
	"github.com/radixark/miles-ci/policy"
)

// Verdict is a run's outcome as miles-ci decides it: from the runner's own
// exit status as the engine recorded it, checked against the per-file
// outcomes and the plan; never from a file the tests can write.
type Verdict string

// The verdicts of a run.
const (
	// Passed: the runner exited 0 and every planned file reported a pass.
	Passed Verdict = "passed"
	// Failed: the runner exited non-zero or was killed by a signal.
	Failed Verdict = "failed"
	// TimedOutRun: miles-ci's own timer ended the run.
	TimedOutRun Verdict = "timeout"
	// Inconsistent: the per-file outcomes contradict the runner's exit
	// status or the plan (Summary.Inconsistent says how); the run failed.
	Inconsistent Verdict = "inconsistent"
)

// The exit statuses of `miles-ci run` and `file-run` beside the runner's own.
const (
	// ExitInconsistent is the exit status of a run the runner passed but
	// whose per-file outcomes contradict it.
	ExitInconsistent = 1
	// ExitTimeout is the exit status of a run miles-ci's timer ended (as
	// GNU timeout exits).
	ExitTimeout = 124
	// ExitCannotRun is the exit status when miles-ci could not run or read
	// the suite (engine, image, build step, plan drift, unreadable results);
	// no test outcome has it.
	ExitCannotRun = 125
)

// Summary is results/summary.json: what one stage shard (or single-file) run
// did, per planned file.
type Summary struct {
	// HW is the backend.
	HW policy.Backend `json:"hw"`
	// Suite is the suite (= stage) name.
	Suite string `json:"suite"`
	// Shard is the shard run, nil when the stage is not sharded or for a single-file run.
	Shard *policy.Partition `json:"shard"`
	// Cadence is the run's cadence ("" for a single-file run).
	Cadence policy.Cadence `json:"cadence"`
	// Image is the image the tests ran in.
	Image string `json:"image"`
	// File is the test file of a single-file run ("" for a stage run).
	File string `json:"file,omitempty"`
	// Verdict is passed, failed, timeout or inconsistent.
	Verdict Verdict `json:"verdict"`
	// ExitCode is the runner's exit status as the engine recorded it
	// (run_suite.py exits 255 on a failure); 128+N when signal N killed it,
	// 124 when miles-ci's timer ended it.
	ExitCode int `json:"exit_code"`
	// Signal is the signal that killed the runner, when one did.
	Signal *int `json:"signal,omitempty"`
	// TimeoutS is the run's timeout when miles-ci's timer ended it.
	TimeoutS *int `json:"timeout_s,omitempty"`
	// Passed is true when the verdict is passed.
	Passed bool `json:"passed"`
	// Tests are the planned files in plan order, each with its outcome.
	Tests []TestResult `json:"tests"`
	// Skipped are the disabled files of the suite, with their reasons.
	Skipped []policy.SkippedTest `json:"skipped"`
	// Inconsistent says, per problem, how the per-file outcomes contradict
	// the runner's exit status or the plan, naming the files.
	Inconsistent []string `json:"inconsistent,omitempty"`
	// Notes say what the results could not tell (e.g. a missing JUnit report).
	Notes []string `json:"notes,omitempty"`
	// Gate is the metric-history gate's verdicts of a CUDA stage run's
	// passing files (rules §16); nil where the run has no gate.
	Gate *GateSummary `json:"gate,omitempty"`
}

// TestResult is one planned file's outcome.
type TestResult struct {
	// File is the repo-relative test file.
	File string `json:"file"`
	// Status is pass, fail, timeout or not-run.
	Status Status `json:"status"`
	// Attempts is how many times it ran (2 when a ROCm retry happened, 0 when not run).
	Attempts int `json:"attempts"`
	// ElapsedS is the time of all attempts, in seconds.
	ElapsedS float64 `json:"elapsed_s"`
	// ExitCode is the last attempt's exit status; nil when there is none
	// (not run, timed out, killed by a signal, or one pytest for the whole CPU shard).
	ExitCode *int `json:"exit_code"`
	// Signal is the signal that killed a single file's run.
	Signal *int `json:"signal,omitempty"`
	// TimeoutS is the file's timeout; nil when the runner has none per file.
	TimeoutS *int `json:"timeout_s"`
	// EstTime is the file's registered est_time in seconds (0, left out,
	// when the plan did not give it), recorded beside each attempt.
	EstTime float64 `json:"est_time,omitempty"`
	// Tries are the attempts in order, each with its outcome and seconds,
	// as the runner's accepted status lines give them (GPU stages; empty
	// where the runner reports only the file, as pytest and a single file).
	Tries []Try `json:"tries,omitempty"`
}

// Try is one attempt of a file.
type Try struct {
	// Status is pass, fail or timeout.
	Status Status `json:"status"`
	// ElapsedS is the attempt's seconds.
	ElapsedS float64 `json:"elapsed_s"`
}

// Expected is a planned file and its timeout, from the spec.
type Expected struct {
	File     string
	TimeoutS *int
}

// Input is what a run produced, with the plan it ran.
type Input struct {
	HW      policy.Backend
	Suite   string
	Shard   *policy.Partition
	Cadence policy.Cadence
	Image   string
	// File is set for a single-file run: its outcome comes from the run record.
	File string
	// Tests are miles-ci's planned files, in order.
	Tests []Expected
	// Skipped are the plan's disabled files.
	Skipped []policy.SkippedTest
	// ContinueOnError is set when the runner goes on after a failed file
	// (--continue-on-error or bypass_fastfail); otherwise it stops at the first.
	ContinueOnError bool
	// MaxAttempts is how often the runner may run one file (2 with ROCm's
	// retry); 0 means 1.
	MaxAttempts int
	// Run is the run wrapper's record, checked against the engine's exit status.
	Run RunRecord
	// JUnit are pytest's test cases (CPU runs); nil when there is no usable report.
	JUnit []Case
	// HaveJUnit is set when pytest's report was read.
	HaveJUnit bool
	// JUnitProblem says why pytest's report could not be used ("" = none or fine).
	JUnitProblem string
	// Log is run.log as exported (for pytest's -v lines when its JUnit is unusable).
	Log string
}

// Summarize joins a run's record with the plan: every planned file gets an
// outcome only the runner can give it, a file the run never reached is
// not-run, and outcomes that contradict the exit status make the run
// inconsistent.
func Summarize(in Input) Summary {
	s := Summary{HW: in.HW, Suite: in.Suite, Shard: in.Shard, Cadence: in.Cadence, Image: in.Image, File: in.File,
		Tests: []TestResult{}, Skipped: append([]policy.SkippedTest{}, in.Skipped...)}
	r := in.Run
	switch r.Ending {
	case Signaled:
		s.ExitCode, s.Signal = 128+r.Signal, intPtr(r.Signal)
	case TimedOut:
		s.ExitCode, s.TimeoutS = ExitTimeout, intPtr(r.TimeoutS)
	default:
		s.ExitCode = r.ExitCode
	}
	for _, e := range in.Tests {
		s.Tests = append(s.Tests, TestResult{File: e.File, Status: NotRun, TimeoutS: e.TimeoutS})
	}
	switch {
	case in.File != "":
		fileResult(&s, in)
	case policy.ProfileOf(in.HW).Pytest:
		cpuResults(&s, in)
	default:
		gpuResults(&s, in)
	}
	if r.Ending == TimedOut {
		// The first file without an outcome was running when the timer fired.
		for i := range s.Tests {
			if s.Tests[i].Status == NotRun && in.File == "" {
				s.Tests[i].Status, s.Tests[i].Attempts = Timeout, 1
				s.Notes = append(s.Notes, fmt.Sprintf("the run's timeout (%ds) ended it while %s ran", r.TimeoutS, s.Tests[i].File))
				break
			}
		}
	}
	if pr := r.Pytest; pr != nil && r.Ending == Exited && r.ExitCode == 0 {
		s.Inconsistent = append(s.Inconsistent, pytestInconsistent(*pr, len(s.Tests))...)
	}
	if pr := r.Pytest; pr != nil && (pr.Overflow || pr.BadLines > 0) {
		s.Notes = append(s.Notes, fmt.Sprintf("miles-ci's pytest channel carried %s that %s not its plugin's%s, so a test wrote to it", plural.N(pr.BadLines, "line"), wasWere(pr.BadLines),
			map[bool]string{true: " and more than miles-ci keeps", false: ""}[pr.Overflow]))
	}
	if r.Ending == Exited && r.ExitCode == 0 {
		var silent, failed []string
		for _, t := range s.Tests {
			switch t.Status {
			case NotRun:
				silent = append(silent, t.File)
			case Fail, Timeout:
				failed = append(failed, t.File)
			}
		}
		if len(silent) > 0 {
			s.Inconsistent = append(s.Inconsistent, "the runner exited 0 but these planned files reported no outcome: "+strings.Join(silent, ", "))
		}
		if len(failed) > 0 {
			s.Inconsistent = append(s.Inconsistent, "the runner exited 0 but these files failed: "+strings.Join(failed, ", "))
		}
	}
	if r.LogCutBytes > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("the run printed %d bytes; run.log keeps the first and last parts and says where %d bytes were cut", r.LogBytes, r.LogCutBytes))
	}
	if r.StatusForeign > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%s shaped like status lines named no planned file at its position; they are test output and count for nothing", plural.N(r.StatusForeign, "line")))
	}
	if len(r.StatusOverflow) > 0 {
		s.Inconsistent = append(s.Inconsistent, "more status lines for a planned file at its position than the runner prints, so a test printed them (the first and last few of each file were kept): "+strings.Join(r.StatusOverflow, ", "))
	}
	if r.StatusDropped > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d more lines shaped like status lines were printed than miles-ci keeps; none of them counts", r.StatusDropped))
	}
	if r.Leftovers > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d process(es) were still running when the runner ended; miles-ci stopped them", r.Leftovers))
	}
	switch {
	case len(s.Inconsistent) > 0:
		s.Verdict = Inconsistent
	case r.Ending == TimedOut:
		s.Verdict = TimedOutRun
	case r.Ending == Exited && r.ExitCode == 0:
		s.Verdict = Passed
	default:
		s.Verdict = Failed
	}
	s.Passed = s.Verdict == Passed
	return s
}

// pytestInconsistent says how what pytest reported to miles-ci contradicts
// a runner that exited 0 with planned files to run.
func pytestInconsistent(pr PytestReport, planned int) []string {
	var out []string
	switch {
	case pr.Sessions == 0 && planned > 0:
		out = append(out, "the runner exited 0, but pytest reported nothing to miles-ci's plugin (-p miles_ci_pytest), so no planned file has an outcome miles-ci can trust")
	case len(pr.ExitStatuses) < pr.Sessions:
		out = append(out, fmt.Sprintf("the runner exited 0, but %d of %d pytest sessions never finished (the process ended early, e.g. os._exit)", pr.Sessions-len(pr.ExitStatuses), pr.Sessions))
	}
	for _, code := range pr.ExitStatuses {
		if code != 0 {
			out = append(out, fmt.Sprintf("pytest reported exit status %d to miles-ci, but the runner exited 0", code))
			break
		}
	}
	return out
}

// ExitStatus is the exit status `miles-ci run` ends with: 0 when passed, the
// runner's own status when it failed (128+N for signal N), ExitTimeout when
// miles-ci's timer ended it, and ExitInconsistent when the runner exited 0
// but its per-file outcomes contradict that.
func (s Summary) ExitStatus() int {
	switch {
	case s.Passed:
		return 0
	case s.ExitCode > 0 && s.ExitCode < 256:
		return s.ExitCode
	}
	return ExitInconsistent
}

// fileResult is a single-file run's outcome: the record decides it. Only
// miles-ci's own timer makes TIMEOUT; exit 124 is an exit status like any
// other, and a signal is "killed by signal N".
func fileResult(s *Summary, in Input) {
	t := &s.Tests[0]
	r := in.Run
	t.Attempts, t.ElapsedS = 1, r.ElapsedS
	switch r.Ending {
	case TimedOut:
		t.Status, t.TimeoutS = Timeout, intPtr(r.TimeoutS)
	case Signaled:
		t.Status, t.Signal = Fail, intPtr(r.Signal)
	default:
		code := r.ExitCode
		t.Status, t.ExitCode = Pass, &code
		if code != 0 {
			t.Status = Fail
		}
	}
	if policy.ProfileOf(in.HW).Pytest && in.HaveJUnit && r.Ending == Exited && r.ExitCode == 0 {
		for _, c := range in.JUnit {
			if c.Failed {
				s.Inconsistent = append(s.Inconsistent, fmt.Sprintf("pytest exited 0 but its JUnit report has a failed case (%s)", c.Name))
				break
			}
		}
	}
}

func intPtr(n int) *int { return &n }

// Name names the run: "stage-c-4-gpu-h200 shard 1/3", or the file of a single-file run.
func (s Summary) Name() string {
	switch {
	case s.File != "":
		return s.Suite + " " + s.File
	case s.Shard != nil:
		return s.Suite + " " + s.Shard.String()
	}
	return s.Suite
}

// detail says how a file failed, e.g. "exit 1" or "timeout after 1800s".
func (t TestResult) detail() string {
	switch {
	case t.Status == Timeout && t.TimeoutS != nil:
		return fmt.Sprintf("timeout after %ds", *t.TimeoutS)
	case t.Status == Timeout:
		return "timeout"
	case t.Status == Fail && t.Signal != nil:
		return fmt.Sprintf("killed by signal %d", *t.Signal)
	case t.Status == Fail && t.ExitCode != nil:
		return fmt.Sprintf("exit %d", *t.ExitCode)
	}
	return string(t.Status)
}

// verdictText is the verdict for a person, e.g. "FAILED (exit code 255)".
func (s Summary) verdictText() string {
	switch {
	case s.Verdict == Passed:
		return "passed"
	case s.Verdict == Inconsistent:
		return fmt.Sprintf("FAILED as inconsistent (exit code %d)", s.ExitCode)
	case s.Verdict == TimedOutRun && s.TimeoutS != nil:
		return fmt.Sprintf("TIMEOUT (miles-ci ended the run after %ds)", *s.TimeoutS)
	case s.Signal != nil:
		return fmt.Sprintf("FAILED (killed by signal %d)", *s.Signal)
	}
	return fmt.Sprintf("FAILED (exit code %d)", s.ExitCode)
}

// Text is the summary for a person: one line per file.
func (s Summary) Text() string {
	var b strings.Builder
	// Every field may come from the checkout or the container: each is
	// one printable line (Printable).
	p := Printable
	fmt.Fprintf(&b, "%s (%s, %s", p(s.Name()), s.HW, p(s.Image))
	if s.Cadence != "" {
		fmt.Fprintf(&b, ", cadence %s", s.Cadence)
	}
	fmt.Fprintf(&b, "): %s\n", s.verdictText())
	for _, t := range s.Tests {
		line := fmt.Sprintf("  %-8s %s", strings.ToUpper(string(t.Status)), p(t.File))
		if t.Status != NotRun {
			line += fmt.Sprintf("  %.0fs", t.ElapsedS)
		}
		if t.Status == Fail || t.Status == Timeout {
			line += "  " + t.detail()
		}
		if t.Attempts > 1 {
			line += fmt.Sprintf("  (%d attempts)", t.Attempts)
		}
		b.WriteString(line + "\n")
	}
	for _, t := range s.Skipped {
		fmt.Fprintf(&b, "  %-8s %s  (%s)\n", "SKIPPED", p(t.File), p(t.Reason))
	}
	if len(s.Tests) == 0 {
		b.WriteString("  no test files planned\n")
	}
	for _, n := range s.Inconsistent {
		b.WriteString("  inconsistent: " + p(n) + "\n")
	}
	for _, n := range s.Notes {
		b.WriteString("  note: " + p(n) + "\n")
	}
	for _, l := range s.Gate.lines() {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// Err is nil when the run passed, else an error naming the exit code and
// the failed, timed-out and not-run files, as `assert` reports it.
func (s Summary) Err() error {
	if s.Passed {
		return nil
	}
	var bad, notRun []string
	for _, t := range s.Tests {
		switch t.Status {
		case Fail, Timeout:
			bad = append(bad, fmt.Sprintf("%s (%s)", t.File, t.detail()))
		case NotRun:
			notRun = append(notRun, t.File)
		}
	}
	var msg string
	switch {
	case s.Verdict == TimedOutRun && s.TimeoutS != nil:
		msg = fmt.Sprintf("%s timed out: miles-ci ended the run after %ds", s.Name(), *s.TimeoutS)
	case s.Signal != nil:
		msg = fmt.Sprintf("%s failed: the runner was killed by signal %d", s.Name(), *s.Signal)
	default:
		msg = fmt.Sprintf("%s failed with exit code %d", s.Name(), s.ExitCode)
	}
	if len(bad) > 0 {
		msg += ": " + strings.Join(bad, ", ")
	}
	if len(notRun) > 0 {
		msg += "; not run: " + strings.Join(notRun, ", ")
	}
	if len(s.Inconsistent) > 0 {
		msg += "; inconsistent: " + strings.Join(s.Inconsistent, "; ")
	}
	return fmt.Errorf("%s; see results/run.log", msg)
}
