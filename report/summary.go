package report

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/policy"
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
	// ExitCode is the run command's exit status (run_suite.py exits 255 on a failure).
	ExitCode int `json:"exit_code"`
	// Passed is true when the run exited 0.
	Passed bool `json:"passed"`
	// Tests are the planned files in plan order, each with its outcome.
	Tests []TestResult `json:"tests"`
	// Skipped are the disabled files of the suite, with their reasons.
	Skipped []policy.SkippedTest `json:"skipped"`
	// Notes say what the results could not tell (e.g. a missing JUnit report).
	Notes []string `json:"notes,omitempty"`
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
	// (not run, timed out, or one pytest for the whole CPU shard).
	ExitCode *int `json:"exit_code"`
	// TimeoutS is the file's timeout; nil when the runner has none per file.
	TimeoutS *int `json:"timeout_s"`
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
	// File is set for a single-file run: its outcome comes from the exit code.
	File string
	// Tests are miles-ci's planned files, in order.
	Tests []Expected
	// Skipped are the plan's disabled files.
	Skipped []policy.SkippedTest
	// ExitCode is the run command's exit status.
	ExitCode int
	// ElapsedS is the whole run's time.
	ElapsedS float64
	// Status are run_suite.py's per-file lines (GPU stages).
	Status []StatusLine
	// JUnit are pytest's test cases (CPU runs); nil when there is no report.
	JUnit []Case
	// HaveJUnit is set when pytest wrote a report.
	HaveJUnit bool
}

// Timeout exit statuses of `timeout --signal=TERM --kill-after=30s`: 124 when
// TERM ended the command, 137 when it had to be killed.
const (
	exitTimedOut = 124
	exitKilled   = 137
)

// Summarize joins a run's outputs with the plan: every planned file gets an
// outcome, and a file the run never reached is not-run.
func Summarize(in Input) Summary {
	s := Summary{HW: in.HW, Suite: in.Suite, Shard: in.Shard, Cadence: in.Cadence, Image: in.Image, File: in.File,
		ExitCode: in.ExitCode, Passed: in.ExitCode == 0, Tests: []TestResult{}, Skipped: []policy.SkippedTest{}}
	s.Skipped = append(s.Skipped, in.Skipped...)
	for _, e := range in.Tests {
		t := TestResult{File: e.File, Status: NotRun, TimeoutS: e.TimeoutS}
		switch {
		case in.HW == policy.CPU:
			cpuResult(&t, in)
		case in.File != "":
			t.Attempts, t.ElapsedS = 1, in.ElapsedS
			t.Status, t.ExitCode = exitStatus(in.ExitCode)
		default:
			gpuResult(&t, in.Status)
		}
		s.Tests = append(s.Tests, t)
	}
	if in.HW == policy.CPU && !in.HaveJUnit {
		s.Notes = append(s.Notes, "pytest wrote no JUnit report, so no file has an outcome of its own; see run.log")
	}
	if in.HW != policy.CPU && in.File == "" && len(in.Tests) > 0 && len(in.Status) == 0 {
		// A runner that stopped printing its per-file lines must not pass for
		// a run in which no file ran: the exit code stays the verdict.
		s.Notes = append(s.Notes, "run_suite.py printed no per-file status line ([i/n] FILE PASS|FAIL|TIMEOUT, with GITHUB_ACTIONS=true), so no file has an outcome of its own; see run.log")
	}
	return s
}

// exitStatus reads a single-file run's exit status.
func exitStatus(code int) (Status, *int) {
	switch code {
	case 0:
		return Pass, &code
	case exitTimedOut, exitKilled:
		return Timeout, nil
	}
	return Fail, &code
}

// gpuResult takes a file's outcome from its status lines: the last attempt decides.
func gpuResult(t *TestResult, lines []StatusLine) {
	for _, l := range lines {
		if l.File != t.File {
			continue
		}
		t.Attempts++
		t.ElapsedS += float64(l.ElapsedS)
		t.Status = l.Status
		t.ExitCode = nil
		switch l.Status {
		case Pass:
			t.ExitCode = intPtr(0)
		case Fail:
			t.ExitCode = l.Exit
		case Timeout:
			if l.TimeoutAfter != nil {
				t.TimeoutS = l.TimeoutAfter
			}
		}
	}
}

// cpuResult takes a file's outcome from pytest's cases: a failed case fails
// the file; a file with no case did not run (pytest -x stopped first).
func cpuResult(t *TestResult, in Input) {
	ran := false
	failed := false
	for _, c := range in.JUnit {
		if !c.belongsTo(t.File) {
			continue
		}
		ran = true
		failed = failed || c.Failed
		t.ElapsedS += c.TimeS
	}
	if ran {
		t.Attempts, t.Status = 1, Pass
		if failed {
			t.Status = Fail
		}
	}
	if in.File != "" {
		if st, _ := exitStatus(in.ExitCode); st == Timeout {
			t.Attempts, t.Status, t.ElapsedS = 1, Timeout, in.ElapsedS
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
		return fmt.Sprintf("%s shard %d/%d", s.Suite, s.Shard.ID+1, s.Shard.Size)
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
	case t.Status == Fail && t.ExitCode != nil:
		return fmt.Sprintf("exit %d", *t.ExitCode)
	}
	return string(t.Status)
}

// Text is the summary for a person: one line per file.
func (s Summary) Text() string {
	var b strings.Builder
	verdict := "passed"
	if !s.Passed {
		verdict = fmt.Sprintf("FAILED (exit code %d)", s.ExitCode)
	}
	fmt.Fprintf(&b, "%s (%s, %s", s.Name(), s.HW, s.Image)
	if s.Cadence != "" {
		fmt.Fprintf(&b, ", cadence %s", s.Cadence)
	}
	fmt.Fprintf(&b, "): %s\n", verdict)
	for _, t := range s.Tests {
		line := fmt.Sprintf("  %-8s %s", strings.ToUpper(string(t.Status)), t.File)
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
		fmt.Fprintf(&b, "  %-8s %s  (%s)\n", "SKIPPED", t.File, t.Reason)
	}
	if len(s.Tests) == 0 {
		b.WriteString("  no test files planned\n")
	}
	for _, n := range s.Notes {
		b.WriteString("  note: " + n + "\n")
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
	msg := fmt.Sprintf("%s failed with exit code %d", s.Name(), s.ExitCode)
	if len(bad) > 0 {
		msg += ": " + strings.Join(bad, ", ")
	}
	if len(notRun) > 0 {
		msg += "; not run: " + strings.Join(notRun, ", ")
	}
	return fmt.Errorf("%s; see results/run.log", msg)
}
