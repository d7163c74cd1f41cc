package policy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Events that start a Miles PR workflow.
const (
	EventPullRequest      = "pull_request"
	EventSchedule         = "schedule"
	EventWorkflowDispatch = "workflow_dispatch"
)

// scheduleCadence maps each configured cron to its cadence; any other cron fails closed.
var scheduleCadence = map[string]Cadence{
	"0 15 * * 0-5": Nightly,
	"0 15 * * 6":   Weekly,
}

var safeRunCILabel = regexp.MustCompile(`^run-ci-[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Trigger is the set of facts a workflow run starts with.
type Trigger struct {
	// Event is the GitHub event name (EVENT_NAME).
	Event string
	// Schedule is the cron of a scheduled run (SCHEDULE).
	Schedule string
	// PRLabelsJSON is the PR's label names as a JSON array of strings (PR_LABELS_JSON).
	PRLabelsJSON string
	// CadenceOverride is a called workflow's cadence input (CADENCE_OVERRIDE); it wins.
	CadenceOverride string
}

// WorkflowPolicy is the resolve-ci-policy job's answer (without skipped stages).
type WorkflowPolicy struct {
	Cadence        Cadence  `json:"cadence"`
	RawLabels      []string `json:"raw_labels"`
	BypassFastfail bool     `json:"bypass_fastfail"`
}

// ResolveTrigger turns trigger facts into the workflow policy (rules §3).
func ResolveTrigger(t Trigger) (WorkflowPolicy, error) {
	var cadence Cadence
	raw := []string{}
	switch {
	case t.CadenceOverride != "":
		c, err := ParseCadence(t.CadenceOverride)
		if err != nil {
			return WorkflowPolicy{}, fmt.Errorf("cadence override: %w", err)
		}
		cadence = c
	case t.Event == EventPullRequest:
		labels, err := canonicalPRLabels(t.PRLabelsJSON)
		if err != nil {
			return WorkflowPolicy{}, err
		}
		raw = labels
		cadence = Regular
		if slices.Contains(raw, LabelNightly) {
			cadence = Nightly
		}
	case t.Event == EventSchedule:
		c, ok := scheduleCadence[t.Schedule]
		if !ok {
			return WorkflowPolicy{}, fmt.Errorf("No CI policy is defined for schedule: %s; known crons are '0 15 * * 0-5' (nightly) and '0 15 * * 6' (weekly)", t.Schedule)
		}
		cadence = c
	case t.Event == EventWorkflowDispatch:
		cadence = Regular
	default:
		return WorkflowPolicy{}, fmt.Errorf("Unsupported PR Test trigger: %s; expected pull_request, schedule or workflow_dispatch (or a cadence override for a called workflow)", t.Event)
	}
	rp, err := ResolveRunPolicy(cadence, raw, false)
	if err != nil {
		return WorkflowPolicy{}, err
	}
	return WorkflowPolicy{Cadence: cadence, RawLabels: raw, BypassFastfail: rp.BypassFastfail}, nil
}

// canonicalPRLabels keeps nightly, bypass-fastfail and safe run-ci-* names, in order.
func canonicalPRLabels(js string) ([]string, error) {
	var labels []string
	dec := json.NewDecoder(strings.NewReader(js))
	if err := dec.Decode(&labels); err != nil || labels == nil || dec.More() {
		return nil, fmt.Errorf("PR labels were not a JSON string array: %s; pass the label names, e.g. [\"run-ci-megatron\"]", abbreviate(js))
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("PR labels were not a JSON string array: %s; pass the label names, e.g. [\"run-ci-megatron\"]", abbreviate(js))
	}
	out := []string{}
	for _, l := range labels {
		if l == LabelNightly || l == LabelBypassFastfail || safeRunCILabel.MatchString(l) {
			out = append(out, l)
		}
	}
	return out, nil
}

func abbreviate(s string) string {
	if s == "" {
		return "(empty)"
	}
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// Outputs are the resolve-ci-policy job's step outputs (rules §3, §4), as
// `miles-ci policy --json` and the Dagger module's policy function print them.
type Outputs struct {
	Cadence        Cadence  `json:"cadence"`
	RawLabels      []string `json:"raw_labels"`
	BypassFastfail bool     `json:"bypass_fastfail"`
	SkippedStages  []string `json:"skipped_stages"`
}

// ResolvePolicy resolves a workflow run's policy: the trigger facts, and on a
// pull request (with no cadence override) the GPU stages its diff skips.
// load reads the checkout's registry and is called only then; diff is the
// name-status diff, nil when missing. The selection is nil off pull requests.
func ResolvePolicy(t Trigger, load func() (*Registry, error), diff []byte) (Outputs, *StageSelection, error) {
	wp, err := ResolveTrigger(t)
	if err != nil {
		return Outputs{}, nil, err
	}
	out := Outputs{Cadence: wp.Cadence, RawLabels: wp.RawLabels, BypassFastfail: wp.BypassFastfail, SkippedStages: []string{}}
	if t.Event != EventPullRequest || t.CadenceOverride != "" {
		return out, nil, nil
	}
	reg, err := load()
	if err != nil {
		return Outputs{}, nil, err
	}
	sel, err := SelectPRStages(reg, wp, diff)
	if err != nil {
		return Outputs{}, nil, err
	}
	out.SkippedStages = sel.Skipped
	return out, &sel, nil
}
