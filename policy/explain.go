package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Verdicts a registration can get under a run policy.
const (
	VerdictEnabled     = "enabled"
	VerdictSkipped     = "skipped"      // selected, but disabled
	VerdictNotSelected = "not-selected" // a label or cadence rule leaves it out
	VerdictNoStage     = "no-stage"     // its suite has no stage of its backend
)

// Explanation is why one registration does or does not run.
type Explanation struct {
	Registration Registration `json:"registration"`
	// Stage is the roster entry of the registration's suite, if it has one.
	Stage   *Stage `json:"stage"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	// Shard is where an enabled test runs in a sharded stage, else nil.
	Shard *Partition `json:"shard"`
	// Targets are the CUDA stages the registration is dispatched to under
	// the GPU-generation rules (rules §11.4), sorted; nil under other rules.
	Targets []string `json:"dispatch_targets,omitempty"`
	// PoolRunsOn are the runners of the registration's job when Stage is a
	// B200 pool suite (rules §11.8): ["b200", "<required_gpus>gpu"].
	PoolRunsOn []string `json:"pool_runs_on,omitempty"`
}

// FileExplanation is every registration of one test file under a run policy.
type FileExplanation struct {
	File          string        `json:"file"`
	Discovered    bool          `json:"discovered"`
	Policy        RunPolicy     `json:"policy"`
	Registrations []Explanation `json:"registrations"`
}

// Explain tells, for one repo-relative test file, every registration, the
// stage it belongs to, and why it is enabled, skipped, not selected, or in
// which shard it runs.
func Explain(reg *Registry, file string, rp RunPolicy) (FileExplanation, error) {
	file = path.Clean(strings.TrimPrefix(file, "./"))
	fe := FileExplanation{File: file, Discovered: slices.Contains(reg.Files, file), Policy: rp, Registrations: []Explanation{}}
	if !fe.Discovered {
		return fe, fmt.Errorf("%s is not a discovered test file; test files are test_*.py below %s", file, strings.Join(DiscoveryRoots, ", "))
	}
	for _, r := range reg.Registrations {
		if r.File != file {
			continue
		}
		fe.Registrations = append(fe.Registrations, explainOne(reg, r, rp))
	}
	return fe, nil
}

func explainOne(reg *Registry, r Registration, rp RunPolicy) Explanation {
	e := explainStage(reg, r, rp)
	if e.Stage != nil && r.Backend == CUDA && reg.Tables.IsPoolSuite(e.Stage.Name) {
		e.PoolRunsOn = PoolRunsOn(reg.Tables.RequiredGPUs(r))
	}
	return e
}

func explainStage(reg *Registry, r Registration, rp RunPolicy) Explanation {
	e := Explanation{Registration: r}
	st, ok := reg.Tables.Stage(r.Suite)
	if !ok || st.Backend != r.Backend {
		e.Verdict = VerdictNoStage
		e.Reason = fmt.Sprintf("suite %q is not a %s suite (those are %s), so no stage runs it", r.Suite, r.Backend, strings.Join(reg.Tables.SuitesOf(r.Backend), ", "))
		return e
	}
	e.Stage = &st
	dispatched := r.Backend == CUDA && reg.Tables.spec().hardware
	if dispatched {
		e.Targets = reg.Tables.DispatchTargets(r.Suite, r.Hardware, rp)
		if e.Targets == nil {
			e.Targets = []string{}
		}
		if len(e.Targets) == 0 {
			e.Verdict = VerdictNotSelected
			e.Reason = fmt.Sprintf("hardware [%s] runs on none of this run's arches [%s] (rules §11.4)", strings.Join(r.Hardware, ", "), strings.Join(rp.DispatchArches, ", "))
			if !rp.Absorb {
				e.Reason += "; only a run-on-<arch> label moves a test off its home stage"
			}
			return e
		}
		if first, ok := reg.Tables.Stage(e.Targets[0]); ok && !slices.Contains(e.Targets, r.Suite) {
			st = first
			e.Stage = &st
		}
	}
	// A disabled registration never runs: say so, and why, before any
	// advice on what would select it (a label would only list it as skipped).
	disabled := ""
	if r.Disabled != nil {
		disabled = "disabled: " + strings.TrimRight(skipReason(*r.Disabled), ".") + ", so no run executes it (one that selects it lists it as skipped); "
	}
	switch {
	case r.Nightly && !rp.AdmitNightly:
		e.Verdict = VerdictNotSelected
		e.Reason = disabled + fmt.Sprintf("a nightly=True registration; cadence %s admits only regular ones (nightly, weekly and release admit it)", rp.Cadence)
		return e
	case len(r.Labels) > 0 && !sharesLabel(r.Labels, rp.IncludeLabels):
		e.Verdict = VerdictNotSelected
		e.Reason = disabled + fmt.Sprintf("labels [%s] share none with the include set [%s]", strings.Join(r.Labels, ", "), strings.Join(rp.IncludeLabels, ", "))
		if disabled == "" {
			want := make([]string, len(r.Labels))
			for i, l := range r.Labels {
				want[i] = runCIPrefix + l
			}
			e.Reason += "; add a PR label such as " + strings.Join(want, " or ")
		}
		return e
	case r.Disabled != nil:
		e.Verdict = VerdictSkipped
		e.Reason = "disabled: " + skipReason(*r.Disabled)
		return e
	}
	e.Verdict = VerdictEnabled
	why := "no labels, so every run of its cadence selects it"
	if len(r.Labels) > 0 {
		why = "label " + strings.Join(sharedLabels(r.Labels, rp.IncludeLabels), ", ") + " is in the include set"
	}
	e.Reason = why
	if dispatched && (len(e.Targets) > 1 || e.Targets[0] != r.Suite) {
		e.Reason += "; dispatched (rules §11.4) from its home stage " + r.Suite + " to " + strings.Join(e.Targets, " and ")
	}
	if n := st.ShardsFor(rp.Cadence); n > 1 {
		sel, _ := reg.Tables.Select(reg.Registrations, r.Backend, st.Name, rp)
		for i, shard := range AssignShards(sel.Enabled, n) {
			for _, t := range shard {
				if t.File == r.File && t.Line == r.Line {
					e.Shard = &Partition{ID: i, Size: n}
				}
			}
		}
		if e.Shard != nil {
			e.Reason += fmt.Sprintf("; runs in %s (0-based id=%d)", e.Shard, e.Shard.ID)
		}
	}
	return e
}

func sharedLabels(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
