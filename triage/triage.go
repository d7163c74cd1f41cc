// Package triage is the verdict rule of `miles-ci triage`: a failing test
// file run K times at the head and K times at the merge base, and what the
// attempts say about the failure. It is pure: attempts in, a verdict and
// what to run next out; the runs themselves are the use case's.
package triage

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/radixark/miles-ci/internal/plural"
)

// Side is where an attempt ran: the head (the change) or the merge base.
type Side string

// The two sides of a triage.
const (
	Head Side = "head"
	Base Side = "base"
)

// Outcome is how one attempt ended.
type Outcome string

// The outcomes an attempt can have: the file passed, failed (a failing
// test, a timeout, a crash of the file), or could not be run at all (the
// engine, the checkout or the budget refused it).
const (
	Pass      Outcome = "pass"
	Fail      Outcome = "fail"
	CannotRun Outcome = "cannot-run"
)

// Attempt is one run of the file.
type Attempt struct {
	Side Side `json:"side"`
	// N is the attempt's number on its side, from 1.
	N       int     `json:"attempt"`
	Outcome Outcome `json:"outcome"`
	// DurationS is how long the attempt took, in seconds.
	DurationS float64 `json:"duration_s"`
	// Log is the path of the attempt's run.log ("" when it has none).
	Log string `json:"run_log,omitempty"`
	// Reason says why it failed or could not run, in a few words.
	Reason string `json:"reason,omitempty"`
}

// Verdict is what the attempts say about the failure.
type Verdict string

// The verdicts (issue 33): the change broke the file; the base fails too;
// the head gives mixed results; the head passes every time; a run could not
// run (or the budget ran out) before any of the others was certain.
const (
	Regression    Verdict = "regression"
	PreExisting   Verdict = "pre-existing"
	Flaky         Verdict = "flaky"
	NotReproduced Verdict = "not-reproduced"
	Inconclusive  Verdict = "inconclusive"
)

// Counts are the attempts' outcomes per side.
type Counts struct {
	HeadPass int `json:"head_pass"`
	HeadFail int `json:"head_fail"`
	BasePass int `json:"base_pass"`
	BaseFail int `json:"base_fail"`
}

// String is the counts as the verdict table shows them.
func (c Counts) String() string {
	s := fmt.Sprintf("head %d pass / %d fail", c.HeadPass, c.HeadFail)
	if c.BasePass+c.BaseFail > 0 {
		s += fmt.Sprintf(", base %d pass / %d fail", c.BasePass, c.BaseFail)
	}
	return s
}

// Decision is the state of one file's triage: the verdict once Final, else
// the side to run next.
type Decision struct {
	Verdict Verdict `json:"verdict,omitempty"`
	Final   bool    `json:"final"`
	// Next is the side the next attempt runs on ("" when Final).
	Next   Side   `json:"next,omitempty"`
	Counts Counts `json:"counts"`
	// Reason says why, in one sentence.
	Reason string `json:"reason"`
}

// Decide is the verdict rule. The head runs first, up to k times: a pass
// and a fail there is flaky at once; k passes are not-reproduced (no base
// run is needed). After k failures at the head the base runs, up to k
// times: one failure there is pre-existing at once; k passes are a
// regression. An attempt that could not run makes the verdict
// inconclusive, since the outcome it would have had is unknown. Decide
// stops as early as the verdict can no longer change.
func Decide(attempts []Attempt, k int) Decision {
	if k < 1 {
		k = 1
	}
	c := count(attempts)
	for _, a := range attempts {
		if a.Outcome == CannotRun {
			return Decision{Verdict: Inconclusive, Final: true, Counts: c,
				Reason: fmt.Sprintf("attempt %d at the %s could not run: %s", a.N, a.Side, orUnknown(a.Reason))}
		}
	}
	d := Decision{Counts: c}
	switch {
	case c.HeadPass > 0 && c.HeadFail > 0:
		d.Verdict, d.Reason = Flaky, fmt.Sprintf("the head both passed and failed (%d of %d attempts failed)", c.HeadFail, c.HeadPass+c.HeadFail)
	case c.HeadPass >= k:
		d.Verdict, d.Reason = NotReproduced, "the head passed "+allOf(c.HeadPass, false)
	case c.HeadPass+c.HeadFail < k:
		d.Next = Head
		return d
	case c.BaseFail > 0:
		d.Verdict, d.Reason = PreExisting, "the head failed "+allOf(c.HeadFail, false)+" and the merge base fails too"
	case c.BasePass >= k:
		d.Verdict, d.Reason = Regression, "the head failed "+allOf(c.HeadFail, false)+"; the merge base passed "+allOf(c.BasePass, true)
	default:
		d.Next = Base
		return d
	}
	d.Final = true
	return d
}

// Stop ends an unfinished triage as inconclusive, saying why (the budget or
// the stage timeout ran out) and what the attempts so far showed.
func Stop(d Decision, why string) Decision {
	if d.Final {
		return d
	}
	return Decision{Verdict: Inconclusive, Final: true, Counts: d.Counts, Reason: why + " (so far: " + d.Counts.String() + ")"}
}

func count(attempts []Attempt) Counts {
	var c Counts
	for _, a := range attempts {
		switch {
		case a.Outcome == CannotRun:
		case a.Side == Head && a.Outcome == Pass:
			c.HeadPass++
		case a.Side == Head:
			c.HeadFail++
		case a.Outcome == Pass:
			c.BasePass++
		default:
			c.BaseFail++
		}
	}
	return c
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return "no reason given"
	}
	return s
}

// RunID is the run id a triage's attempts on one side carry (GITHUB_RUN_ID
// in the container, github_run_id in the history): a 63-bit FNV-1a hash
// of the triage's session and the side, so the head's and the base's
// attempts never share an idempotency key.
func RunID(session string, side Side) int64 {
	h := fnv.New64a()
	h.Write([]byte(session + "/" + string(side)))
	return int64(h.Sum64() >> 1)
}

// Ref is the git_ref a triage's attempts are recorded under:
// refs/triage/SESSION/SIDE. It ties a head's attempts to its base's, so
// the verdict can be read back from the history (RefParts).
func Ref(session string, side Side) string {
	return "refs/triage/" + session + "/" + string(side)
}

// RefParts reads a Ref back; ok is false for any other ref.
func RefParts(ref string) (session string, side Side, ok bool) {
	rest, ok := strings.CutPrefix(ref, "refs/triage/")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, "/")
	if i <= 0 {
		return "", "", false
	}
	side = Side(rest[i+1:])
	if side != Head && side != Base {
		return "", "", false
	}
	return rest[:i], side, true
}

// Event is the event_name of a triage attempt in the runtime history. The
// calibration reads only schedule rows (rules §13.2), so triage attempts
// never move an est_time.
const Event = "triage"

// allOf is n attempts as a verdict counts them: "all 3 attempts" ("all 3"
// when short, after a first count), or "its 1 attempt" when there was one
// (--attempts 1).
func allOf(n int, short bool) string {
	switch {
	case n == 1:
		return "its 1 attempt"
	case short:
		return fmt.Sprintf("all %d", n)
	}
	return "all " + plural.N(n, "attempt")
}
