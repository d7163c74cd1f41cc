package policy

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/policy/pysource"
)

// PlanRequest is one run_suite.py invocation: which suite, cadence, labels and shard.
type PlanRequest struct {
	HW      Backend
	Suite   string
	Cadence Cadence
	// Labels are the raw PR-side labels (run-ci-X, nightly, bypass-fastfail).
	Labels         []string
	MatchAllLabels bool
	// Partition is nil when the suite is not sharded.
	Partition       *Partition
	ContinueOnError bool
}

// PlannedTest is one enabled test of a plan.
type PlannedTest struct {
	File     string   `json:"file"`
	EstTime  float64  `json:"est_time"`
	Labels   []string `json:"labels"`
	Nightly  bool     `json:"nightly"`
	Implicit bool     `json:"-"`
}

// SkippedTest is a selected but disabled test, with its reason.
type SkippedTest struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// Plan is what one shard of one suite runs, as run_suite.py --list-only reports it.
type Plan struct {
	HW              Backend       `json:"hw"`
	Suite           string        `json:"suite"`
	Cadence         Cadence       `json:"cadence"`
	IncludeLabels   []string      `json:"include_labels"`
	AdmitNightly    bool          `json:"admit_nightly"`
	BypassFastfail  bool          `json:"-"`
	ContinueOnError bool          `json:"continue_on_error"`
	Partition       *Partition    `json:"partition"`
	Enabled         []PlannedTest `json:"enabled"`
	Skipped         []SkippedTest `json:"skipped"`
	EstTotal        float64       `json:"est_total"`
	// Warnings are ignored raw labels (not part of Miles' output).
	Warnings []string `json:"-"`
}

// BuildPlan applies the run policy, selection and sharding of rules §3 and §5
// to a registry. Enabled tests are in shard-assignment order when partitioned,
// else in discovery order; Skipped lists the disabled tests of the whole suite.
func BuildPlan(reg *Registry, req PlanRequest) (*Plan, error) {
	// Faults surface in run_suite.py's order: the registry (already loaded),
	// then the run policy, then the suite.
	rp, err := reg.Tables.ResolveRunPolicy(req.Cadence, req.Labels, req.MatchAllLabels)
	if err != nil {
		return nil, err
	}
	sel, err := reg.Tables.Select(reg.Registrations, req.HW, req.Suite, rp)
	if err != nil {
		return nil, err
	}
	enabled := sel.Enabled
	if req.Partition != nil {
		if enabled, err = Shard(enabled, *req.Partition); err != nil {
			return nil, err
		}
	}
	p := &Plan{
		HW:              req.HW,
		Suite:           req.Suite,
		Cadence:         rp.Cadence,
		IncludeLabels:   rp.IncludeLabels,
		AdmitNightly:    rp.AdmitNightly,
		BypassFastfail:  rp.BypassFastfail,
		ContinueOnError: req.ContinueOnError || rp.BypassFastfail,
		Partition:       req.Partition,
		Enabled:         []PlannedTest{},
		Skipped:         []SkippedTest{},
		Warnings:        rp.Warnings,
	}
	for _, r := range enabled {
		p.Enabled = append(p.Enabled, PlannedTest{File: r.File, EstTime: r.EstTime, Labels: r.Labels, Nightly: r.Nightly, Implicit: r.Implicit})
		p.EstTotal += r.EstTime
	}
	for _, r := range sel.Skipped {
		p.Skipped = append(p.Skipped, SkippedTest{File: r.File, Reason: skipReason(*r.Disabled)})
	}
	return p, nil
}

// skipReason is the reason Miles prints: the disabled string, or "disabled" when empty.
func skipReason(s string) string {
	if s == "" {
		return "disabled"
	}
	return s
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// Text renders the plan exactly as run_suite.py --list-only prints it.
func (p *Plan) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Policy: cadence=%s bypass_fastfail=%s include_labels=%s\n",
		pysource.Repr(string(p.Cadence)), pyBool(p.BypassFastfail), pysource.ReprList(p.IncludeLabels))
	partition := "full"
	if p.Partition != nil {
		partition = fmt.Sprintf("%d/%d (0-based id=%d)", p.Partition.ID+1, p.Partition.Size, p.Partition.ID)
	}
	rule := strings.Repeat("=", 60)
	fmt.Fprintf(&b, "\n%s\n", rule)
	fmt.Fprintf(&b, "Hardware: %s  Suite: %s  Cadence: %s  Continue on error: %s  Partition: %s\n",
		backendEnumName(p.HW), p.Suite, p.Cadence, pyBool(p.ContinueOnError), partition)
	fmt.Fprintf(&b, "%s\n", rule)
	if len(p.Skipped) > 0 {
		fmt.Fprintf(&b, "Skipped %d test(s):\n", len(p.Skipped))
		for _, s := range p.Skipped {
			// A file's name and reason are the checkout's: each on its line.
			fmt.Fprintf(&b, "  - %s (reason: %s)\n", printable.Line(s.File), printable.Line(s.Reason))
		}
		b.WriteString("\n")
	}
	if len(p.Enabled) == 0 {
		fmt.Fprintf(&b, "No tests found for hw=%s, suite=%s, cadence=%s\n", backendEnumName(p.HW), p.Suite, p.Cadence)
		b.WriteString("This is expected during incremental migration. Skipping.\n")
	} else {
		fmt.Fprintf(&b, "Enabled %d test(s) (est total %ss):\n", len(p.Enabled), pysource.FormatFixed0(p.EstTotal))
		for _, t := range p.Enabled {
			suffix := ""
			if t.Implicit {
				suffix = " [implicit]"
			}
			fmt.Fprintf(&b, "  - %s (est_time=%ss)%s\n", printable.Line(t.File), pysource.FloatRepr(t.EstTime), suffix)
		}
	}
	b.WriteString("\n")
	if len(p.Enabled) == 0 {
		b.WriteString("No tests to run. Exiting with success.\n")
	}
	return b.String()
}
