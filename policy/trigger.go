package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
)

// Events that start a Miles PR workflow.
const (
	EventPullRequest      = "pull_request"
	EventSchedule         = "schedule"
	EventWorkflowDispatch = "workflow_dispatch"
)

var safeRunCILabel = lazyre.New(`^run-ci-[A-Za-z0-9][A-Za-z0-9_.-]*$`)

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
	// Tables give the crons and known labels; nil means the built-in tables.
	Tables *Tables
}

// WorkflowPolicy is the resolve-ci-policy job's answer (without skipped stages).
type WorkflowPolicy struct {
	Cadence        Cadence  `json:"cadence"`
	RawLabels      []string `json:"raw_labels"`
	BypassFastfail bool     `json:"bypass_fastfail"`
}

// ResolveTrigger turns trigger facts into the workflow policy (rules §3).
func ResolveTrigger(t Trigger) (WorkflowPolicy, error) {
	tables := t.Tables.or()
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
		labels, err := tables.canonicalPRLabels(t.PRLabelsJSON)
		if err != nil {
			return WorkflowPolicy{}, err
		}
		raw = labels
		cadence = Regular
		if slices.Contains(raw, LabelNightly) {
			cadence = Nightly
		}
	case t.Event == EventSchedule:
		c, ok := tables.CronPolicy(t.Schedule)
		if !ok {
			//lint:ignore ST1005 the reference's error text, verbatim (parity with the Python CI)
			return WorkflowPolicy{}, fmt.Errorf("No CI policy is defined for schedule: %s; known crons are %s", t.Schedule, knownCrons(tables))
		}
		cadence, raw = c.Cadence, c.RawLabels
	case t.Event == EventWorkflowDispatch:
		cadence = Regular
	default:
		//lint:ignore ST1005 the reference's error text, verbatim (parity with the Python CI)
		return WorkflowPolicy{}, fmt.Errorf("Unsupported PR Test trigger: %s; expected pull_request, schedule or workflow_dispatch (or a cadence override for a called workflow)", t.Event)
	}
	rp, err := tables.ResolveRunPolicy(cadence, raw, false)
	if err != nil {
		return WorkflowPolicy{}, err
	}
	return WorkflowPolicy{Cadence: cadence, RawLabels: raw, BypassFastfail: rp.BypassFastfail}, nil
}

// canonicalPRLabels keeps nightly, bypass-fastfail and safe run-ci-* names, in order.
func (t *Tables) canonicalPRLabels(js string) ([]string, error) {
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
		if t.IsWorkflowOnlyLabel(l) || safeRunCILabel.MatchString(l) {
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

// knownCrons lists the configured crons for an error message, e.g.
// '0 15 * * 0-5' (nightly) and '0 15 * * 6' (weekly).
func knownCrons(t *Tables) string {
	if len(t.Crons) == 0 {
		return "none (" + TableCrons + " is empty)"
	}
	parts := make([]string, len(t.Crons))
	for i, c := range t.Crons {
		parts[i] = fmt.Sprintf("'%s' (%s)", c.Cron, c.Cadence)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
