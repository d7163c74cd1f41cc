package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// Cadence is how often a run happens; it decides scope and nightly admission.
type Cadence string

// The four cadences of Miles CI.
const (
	Regular Cadence = "regular"
	Nightly Cadence = "nightly"
	Weekly  Cadence = "weekly"
	Release Cadence = "release"
)

// Cadences lists the cadences sorted by name, as Miles prints them.
var Cadences = []Cadence{Nightly, Regular, Release, Weekly}

// Workflow-only labels: consumed by the workflow, never domain requests.
const (
	LabelNightly        = "nightly"
	LabelBypassFastfail = "bypass-fastfail"
	LabelRunAll         = "run-ci-all"
	LabelRunImage       = "run-ci-image"
	runCIPrefix         = "run-ci-"
)

// ParseCadence validates a cadence name.
func ParseCadence(s string) (Cadence, error) {
	for _, c := range Cadences {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, len(Cadences))
	for i, c := range Cadences {
		names[i] = string(c)
	}
	//lint:ignore ST1005 the reference's error text, verbatim (parity with the Python CI)
	return "", fmt.Errorf("Unknown CI cadence %s; expected one of %s", pysource.Repr(s), pysource.ReprList(names))
}

// RunPolicy is what one run selects and how it treats failures (rules §3).
type RunPolicy struct {
	Cadence Cadence `json:"cadence"`
	// IncludeLabels is scope ∪ requested (∪ all with match-all-labels), sorted.
	IncludeLabels []string `json:"include_labels"`
	// AdmitNightly admits nightly=True registrations.
	AdmitNightly bool `json:"admit_nightly"`
	// BypassFastfail lets GPU stages run after a stage-a-cpu failure and makes
	// suites continue after a failed test.
	BypassFastfail bool `json:"bypass_fastfail"`
	// WriteBaseline is set when the run writes the rolling performance baseline.
	WriteBaseline bool `json:"write_baseline"`
	// DispatchArches are the GPU generations the run executes on (rules
	// §11.3), in KNOWN_ARCHES order; empty: each test on its own default.
	DispatchArches []string `json:"dispatch_arches,omitempty"`
	// Absorb lets a CUDA test run outside its home stage (a run-on-<arch> label).
	Absorb bool `json:"absorb,omitempty"`
	// Warnings are raw labels that were ignored, with why.
	Warnings []string `json:"warnings"`
}

// RequestedLabels returns the known domain labels that raw labels request
// (run-ci-X with X known), sorted; the second result warns about labels
// without the run-ci- prefix, which are ignored.
func (t *Tables) RequestedLabels(raw []string) (requested []string, warnings []string) {
	seen := map[string]bool{}
	for _, l := range raw {
		if l == "" || t.IsWorkflowOnlyLabel(l) {
			continue
		}
		x, ok := strings.CutPrefix(l, runCIPrefix)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("--labels entry %s is missing the expected 'run-ci-' prefix; ignoring. Domain labels must be raw `run-ci-<X>` strings.", pysource.Repr(l)))
			continue
		}
		if t.IsKnownLabel(x) && !seen[x] {
			seen[x] = true
			requested = append(requested, x)
		}
	}
	slices.Sort(requested)
	return requested, warnings
}

// ResolveRunPolicy computes the run policy under the built-in tables; see
// Tables.ResolveRunPolicy.
func ResolveRunPolicy(cadence Cadence, raw []string, matchAll bool) (RunPolicy, error) {
	return builtin.ResolveRunPolicy(cadence, raw, matchAll)
}

// ResolveRunPolicy computes the run policy of a cadence and raw labels
// (rules §3); matchAll adds every known label, as --match-all-labels does.
func (t *Tables) ResolveRunPolicy(cadence Cadence, raw []string, matchAll bool) (RunPolicy, error) {
	known := t.KnownLabels()
	if _, err := ParseCadence(string(cadence)); err != nil {
		return RunPolicy{}, err
	}
	if slices.Contains(raw, LabelNightly) && cadence != Nightly {
		//lint:ignore ST1005 the reference's error text, verbatim (parity with the Python CI)
		return RunPolicy{}, fmt.Errorf("The nightly workflow label requires cadence='nightly' (got %s); drop the nightly label or pass --cadence nightly", pysource.Repr(string(cadence)))
	}
	requested, warnings := t.RequestedLabels(raw)
	spec := t.spec()
	dispatches := spec.hardware && !t.or().Forms.NoDispatch
	blackwellOnly := dispatches && spec.blackwellLabel != "" && slices.Contains(raw, spec.blackwellLabel)
	var scope []string
	switch {
	case slices.Contains(raw, LabelRunAll) || cadence == Weekly || cadence == Release:
		scope = known
	case cadence == Nightly:
		scope = without(known, "long", "ft-long")
	case blackwellOnly:
		scope = known // the arch, not the domain, selects here (rules §11.3)
	case slices.Contains(raw, LabelRunImage):
		scope = without(known, "long", "ft-short", "ft-long")
	}
	// run-on-<arch> picks the arches and lets a test leave its home stage;
	// the blackwell-only scope picks its arch without that move.
	var dispatch []string
	for _, a := range t.or().Arches {
		if dispatches && slices.Contains(raw, runOnPrefix+a) {
			dispatch = append(dispatch, a)
		}
	}
	absorb := len(dispatch) > 0
	if !absorb && blackwellOnly {
		dispatch = []string{spec.blackwellArch}
	}
	if matchAll {
		scope = known
	}
	include := union(scope, requested)
	late := cadence == Nightly || cadence == Weekly || cadence == Release
	return RunPolicy{
		Cadence:        cadence,
		IncludeLabels:  include,
		AdmitNightly:   late,
		BypassFastfail: late || slices.Contains(raw, LabelBypassFastfail),
		WriteBaseline:  cadence == Nightly || cadence == Weekly,
		DispatchArches: dispatch,
		Absorb:         absorb,
		Warnings:       warnings,
	}, nil
}

// Selects reports whether the policy selects a registration: nightly ones only
// when admitted, and only with no labels or a label in the include set.
func (p RunPolicy) Selects(r Registration) bool {
	if r.Nightly && !p.AdmitNightly {
		return false
	}
	return len(r.Labels) == 0 || sharesLabel(r.Labels, p.IncludeLabels)
}

func sharesLabel(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

func without(all []string, drop ...string) []string {
	var out []string
	for _, l := range all {
		if !slices.Contains(drop, l) {
			out = append(out, l)
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// Selection is the outcome of filtering one backend's suite.
type Selection struct {
	// Enabled are the selected registrations without a disabled reason, in discovery order.
	Enabled []Registration
	// Skipped are the selected registrations with a disabled reason, in discovery order.
	Skipped []Registration
}

// Select filters the registrations of one backend and suite by the policy,
// checking the suite against the built-in tables; see Tables.Select.
func Select(regs []Registration, hw Backend, suite string, p RunPolicy) (Selection, error) {
	return builtin.Select(regs, hw, suite, p)
}

// Select filters the registrations of one backend and suite by the policy.
func (t *Tables) Select(regs []Registration, hw Backend, suite string, p RunPolicy) (Selection, error) {
	if err := t.CheckSuite(hw, suite); err != nil {
		return Selection{}, err
	}
	var s Selection
	for _, r := range regs {
		if r.Backend != hw || !t.RunsInStage(r, suite, p) || !p.Selects(r) {
			continue
		}
		if r.Disabled != nil {
			s.Skipped = append(s.Skipped, r)
		} else {
			s.Enabled = append(s.Enabled, r)
		}
	}
	return s, nil
}
