package triage

import "testing"

// seq builds attempts from outcomes: h and H are a head pass and fail, b and
// B a base pass and fail, x a head attempt that could not run.
func seq(s string) []Attempt {
	var out []Attempt
	n := map[Side]int{}
	for _, r := range s {
		side, o := Head, Pass
		switch r {
		case 'H':
			o = Fail
		case 'b':
			side = Base
		case 'B':
			side, o = Base, Fail
		case 'x':
			o = CannotRun
		}
		n[side]++
		out = append(out, Attempt{Side: side, N: n[side], Outcome: o, Reason: "engine gone"})
	}
	return out
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name     string
		attempts string
		k        int
		verdict  Verdict
		next     Side
	}{
		{"nothing run yet: the head first", "", 3, "", Head},
		{"one head failure: the head again", "H", 3, "", Head},
		{"one head pass: the head again (flaky or not-reproduced)", "h", 3, "", Head},
		{"k head passes", "hhh", 3, NotReproduced, ""},
		{"a pass then a fail: flaky at once", "hH", 3, Flaky, ""},
		{"a fail then a pass: flaky at once", "Hh", 3, Flaky, ""},
		{"k head failures: the base next", "HHH", 3, "", Base},
		{"k head failures, a base pass: the base again", "HHHb", 3, "", Base},
		{"k head failures, a base failure: pre-existing at once", "HHHB", 3, PreExisting, ""},
		{"a base failure after passes is still pre-existing", "HHHbbB", 3, PreExisting, ""},
		{"k head failures, k base passes: regression", "HHHbbb", 3, Regression, ""},
		{"k=1", "Hb", 1, Regression, ""},
		{"k below 1 counts as 1", "h", 0, NotReproduced, ""},
		{"an attempt that could not run", "Hx", 3, Inconclusive, ""},
		{"could not run beats a flaky head", "hHx", 3, Inconclusive, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(seq(tc.attempts), tc.k)
			if d.Verdict != tc.verdict || d.Next != tc.next || d.Final != (tc.verdict != "") {
				t.Errorf("wanted verdict %q next %q, got %q next %q (final %v: %s)", tc.verdict, tc.next, d.Verdict, d.Next, d.Final, d.Reason)
			}
		})
	}
}

func TestDecideCountsAndReason(t *testing.T) {
	d := Decide(seq("HHHbbb"), 3)
	if want := (Counts{HeadFail: 3, BasePass: 3}); d.Counts != want {
		t.Errorf("wanted %+v, got %+v", want, d.Counts)
	}
	if want := "the head failed all 3 attempts; the merge base passed all 3"; d.Reason != want {
		t.Errorf("wanted %q, got %q", want, d.Reason)
	}
	if want := "head 0 pass / 3 fail, base 3 pass / 0 fail"; d.Counts.String() != want {
		t.Errorf("wanted %q, got %q", want, d.Counts.String())
	}
	// One attempt a side (--attempts 1) is counted as one, not "all 1 attempts".
	d = Decide(seq("Hb"), 1)
	if want := "the head failed its 1 attempt; the merge base passed its 1 attempt"; d.Reason != want {
		t.Errorf("wanted %q, got %q", want, d.Reason)
	}
	d = Decide(seq("Hx"), 3)
	if want := "attempt 2 at the head could not run: engine gone"; d.Reason != want {
		t.Errorf("wanted %q, got %q", want, d.Reason)
	}
}

func TestStop(t *testing.T) {
	d := Stop(Decide(seq("HH"), 3), "the --budget of 10m0s ran out")
	if d.Verdict != Inconclusive || !d.Final {
		t.Fatalf("wanted a final inconclusive verdict, got %+v", d)
	}
	if want := "the --budget of 10m0s ran out (so far: head 0 pass / 2 fail)"; d.Reason != want {
		t.Errorf("wanted %q, got %q", want, d.Reason)
	}
	if got := Stop(Decide(seq("hH"), 3), "late"); got.Verdict != Flaky {
		t.Errorf("wanted a final verdict to stand, got %q", got.Verdict)
	}
}

func TestRefParts(t *testing.T) {
	session, side, ok := RefParts(Ref("20261204-140000/x", Base))
	if !ok || session != "20261204-140000/x" || side != Base {
		t.Errorf("wanted the session and side back, got %q %q %v", session, side, ok)
	}
	for _, ref := range []string{"refs/heads/main", "refs/triage/x/middle", "refs/triage//head", "local"} {
		if _, _, ok := RefParts(ref); ok {
			t.Errorf("%s: wanted no triage ref", ref)
		}
	}
	if RunID("s", Head) == RunID("s", Base) || RunID("s", Head) < 0 {
		t.Error("wanted distinct non-negative run ids per side")
	}
}
