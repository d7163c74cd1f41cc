package report

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/internal/plural"
)

// gpuResults takes each planned file's outcome from the runner's status
// lines, accepting a line only where the runner itself can print it: for
// the planned file at its position i of n (n the plan's length), in plan
// order, once per attempt, a retry only right after a failed attempt and
// within the allowed attempts. Any other line shaped like a status line is
// test output. Two different lines for one attempt mean a test printed
// one: the worse outcome counts (a forger can only make a file look worse)
// and the run is inconsistent. Without continue-on-error the runner stops
// at the first failed file, so an outcome for a later file is not counted
// and makes the run inconsistent.
func gpuResults(s *Summary, in Input) {
	plan := s.Tests
	if len(plan) == 0 {
		return
	}
	// One line at a time: the record's lines are bounded by the wrapper,
	// and no flood of them can hide the runner's own.
	var lines []StatusLine
	for _, text := range in.Run.StatusLines {
		if l, ok := parseStatusLine(text); ok {
			lines = append(lines, l)
		}
	}
	maxAttempts := max(in.MaxAttempts, 1)
	// attempts[i] are the accepted lines of plan[i], one per attempt.
	attempts := make([][]StatusLine, len(plan))
	next := 0 // index of the file whose first attempt comes next
	cur := -1 // index of the file last accepted
	rejected := 0
	conflicts := map[int]bool{}
	for _, l := range lines {
		i := l.Index - 1
		if l.Total != len(plan) || i < 0 || i >= len(plan) || l.File != plan[i].File {
			rejected++
			continue
		}
		attempt := l.RetryOf // 0-based attempt index this line claims
		switch {
		case attempt == 0 && i == next:
			attempts[i] = append(attempts[i], l)
			cur, next = i, i+1
		case attempt > 0 && i == cur && attempt == len(attempts[i]) && attempt < maxAttempts && attempts[i][attempt-1].Status == Fail:
			attempts[i] = append(attempts[i], l)
		case attempt < len(attempts[i]):
			// A second line for an attempt already accepted.
			if prev := attempts[i][attempt]; prev.Status != l.Status || !sameInts(prev.Exit, l.Exit) {
				conflicts[i] = true
				if worse(l.Status, prev.Status) {
					attempts[i][attempt] = l
				}
			}
			rejected++
		default:
			rejected++
		}
	}
	for i := range plan {
		if len(attempts[i]) == 0 {
			continue
		}
		t := &plan[i]
		for _, l := range attempts[i] {
			t.Attempts++
			t.ElapsedS += float64(l.ElapsedS)
			t.Tries = append(t.Tries, Try{Status: l.Status, ElapsedS: float64(l.ElapsedS)})
			t.Status, t.ExitCode = l.Status, nil
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
		if conflicts[i] {
			s.Inconsistent = append(s.Inconsistent, fmt.Sprintf("%s has two different status lines for one attempt, so a test printed one; the worse one counts", t.File))
		}
	}
	if !in.ContinueOnError {
		stop := -1
		for i, t := range plan {
			if t.Status == Fail || t.Status == Timeout {
				stop = i
				break
			}
		}
		if stop >= 0 {
			var after []string
			for i := stop + 1; i < len(plan); i++ {
				if plan[i].Status != NotRun {
					after = append(after, fmt.Sprintf("%s (%s)", plan[i].File, plan[i].Status))
					plan[i] = TestResult{File: plan[i].File, Status: NotRun, TimeoutS: plan[i].TimeoutS}
				}
			}
			if len(after) > 0 {
				s.Inconsistent = append(s.Inconsistent, fmt.Sprintf("the runner stops at the first failed file (%s), yet these later files reported an outcome, which is not counted: %s",
					plan[stop].File, strings.Join(after, ", ")))
			}
		}
	}
	if len(lines) == 0 {
		// A runner that stopped printing its per-file lines must not pass for
		// a run in which no file ran: the exit code stays the verdict.
		s.Notes = append(s.Notes, "run_suite.py printed no per-file status line ([i/n] FILE PASS|FAIL|TIMEOUT, with GITHUB_ACTIONS=true), so no file has an outcome of its own; see run.log")
	}
	if rejected > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%s shaped like status lines %s not the runner's (wrong file, position, order or repeat) and count as test output", plural.N(rejected, "line"), wasWere(rejected)))
	}
}

// worse reports whether status a is a worse outcome than b.
func worse(a, b Status) bool { return rank(a) > rank(b) }

func rank(s Status) int {
	switch s {
	case Pass:
		return 0
	case Fail:
		return 1
	case Timeout:
		return 2
	}
	return 3
}

func sameInts(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// cpuResults takes each planned file's outcome from pytest's JUnit cases,
// each case attributed to exactly one planned file (its file attribute, or
// its classname being the file's module, optionally with a class; a
// collection error names the module). A failed case fails the file; a file
// with no case did not run (pytest -x stopped first). When the report is
// unusable, pytest's -v lines in run.log stand in, and a note says so.
func cpuResults(s *Summary, in Input) {
	plan := s.Tests
	byModule := map[string]int{}
	byFile := map[string]int{}
	for i, t := range plan {
		byModule[moduleOf(t.File)] = i
		byFile[t.File] = i
	}
	ran := make([]bool, len(plan))
	failed := make([]bool, len(plan))
	if pr := in.Run.Pytest; pr != nil && pr.Sessions > 0 {
		// miles-ci's own record of what pytest reported; pytest's
		// junit.xml, which the tests can write, is not read for outcomes.
		foreign := 0
		for file, f := range pr.Files {
			i, ok := byFile[file]
			if !ok {
				foreign++
				continue
			}
			ran[i] = ran[i] || f.Ran
			failed[i] = failed[i] || f.Failed
		}
		if foreign > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("pytest reported on %s that %s not planned; they count for nothing", plural.N(foreign, "file"), isAre(foreign)))
		}
		if in.JUnitProblem != "" {
			s.Notes = append(s.Notes, in.JUnitProblem+"; the outcomes come from pytest's report to miles-ci")
		}
		if in.HaveJUnit {
			for _, c := range in.JUnit {
				if i, ok := caseFile(c, byFile, byModule); ok && c.Failed && !failed[i] {
					s.Notes = append(s.Notes, fmt.Sprintf("pytest's junit.xml disagrees with what pytest reported to miles-ci about %s; the outcomes come from pytest's report to miles-ci, not from the file the tests can write", plan[i].File))
					break
				}
			}
		}
	} else if in.HaveJUnit {
		foreign := 0
		for _, c := range in.JUnit {
			i, ok := caseFile(c, byFile, byModule)
			if !ok {
				foreign++
				continue
			}
			ran[i] = true
			failed[i] = failed[i] || c.Failed
			plan[i].ElapsedS += c.TimeS
		}
		if foreign > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("pytest's JUnit report has %s of no planned file; they count for nothing", plural.N(foreign, "case")))
		}
	} else {
		why := in.JUnitProblem
		if why == "" {
			why = "pytest wrote no JUnit report"
		}
		s.Notes = append(s.Notes, why+"; the files' outcomes come from pytest's -v lines in run.log")
		for _, m := range pytestLine.FindAllStringSubmatch(in.Log, -1) {
			file, word := m[1], m[2]
			if word == "" {
				file, word = m[3], "ERROR"
			}
			i, ok := byFile[file]
			if !ok {
				continue
			}
			ran[i] = true
			failed[i] = failed[i] || word == "FAILED" || word == "ERROR" || word == "XPASS(strict)"
		}
	}
	for i := range plan {
		if ran[i] {
			plan[i].Attempts, plan[i].Status = 1, Pass
			if failed[i] {
				plan[i].Status = Fail
			}
		}
	}
}

// pytestLine matches the result lines of `pytest -v` ("FILE::TEST PASSED ...")
// and its collection errors ("ERROR collecting FILE").
var pytestLine = lazyre.New(`(?m)^(tests/[^\s:]+\.py)::\S.*? (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b|^_+ ERROR collecting (tests/\S+\.py) _+\r?$`)

// moduleOf is a repo-relative file's dotted module path, as pytest names it.
func moduleOf(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
}

// caseFile finds the planned file a case belongs to: exactly its file
// attribute; else the longest planned module that its classname is, or
// starts with followed by a class; else, for a collection error (empty
// classname), the module its name is.
func caseFile(c Case, byFile, byModule map[string]int) (int, bool) {
	if c.File != "" {
		i, ok := byFile[c.File]
		return i, ok
	}
	if c.Classname == "" {
		i, ok := byModule[c.Name]
		return i, ok
	}
	name := c.Classname
	for {
		if i, ok := byModule[name]; ok {
			return i, true
		}
		cut := strings.LastIndexByte(name, '.')
		if cut < 0 {
			return 0, false
		}
		name = name[:cut]
	}
}

// wasWere and isAre are the verb that agrees with a count.
func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
