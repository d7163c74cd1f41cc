package usecase

import (
	"fmt"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/internal/nearest"
	"github.com/radixark/miles-ci/policy"
)

// UnknownError is an input that names a stage, backend, suite or event
// miles-ci does not know: a typo must never pass as "nothing to do". It is a
// usage error (the CLI exits 2), and says the nearest known name and every
// known one.
type UnknownError struct {
	// Input is the flag or argument that gave the name ("" when the message
	// needs none).
	Input string
	// What the name should be: "stage", "stage or backend", "event", ...
	What  string
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	var b strings.Builder
	if e.Input != "" {
		b.WriteString(e.Input + ": ")
	}
	fmt.Fprintf(&b, "unknown %s %q", e.What, e.Name)
	if n := nearest.Name(e.Name, e.Known); n != "" {
		fmt.Fprintf(&b, "; did you mean %s?", n)
	}
	if len(e.Known) > 0 {
		fmt.Fprintf(&b, " (the known ones: %s)", strings.Join(e.Known, ", "))
	}
	return b.String()
}

// GitHubEvents are the events a GitHub Actions workflow can run on: a name
// outside them is a typo, not an event some Miles workflow might handle.
var GitHubEvents = []string{
	"branch_protection_rule", "check_run", "check_suite", "create", "delete", "deployment", "deployment_status",
	"discussion", "discussion_comment", "fork", "gollum", "issue_comment", "issues", "label", "merge_group",
	"milestone", "page_build", "public", "pull_request", "pull_request_review", "pull_request_review_comment",
	"pull_request_target", "push", "registry_package", "release", "repository_dispatch", "schedule", "status",
	"watch", "workflow_call", "workflow_dispatch", "workflow_run",
}

// CIEvents and policyEvents are the events ci and policy act on.
var (
	CIEvents     = []string{"pull_request", "schedule", "workflow_dispatch", "release"}
	policyEvents = []string{"pull_request", "schedule", "workflow_dispatch"}
)

// PRLabelsFrom names a pull request's labels in a label warning.
const PRLabelsFrom = "the PR's labels"

// historyEvents are the events a history sample may carry: GitHub's, and
// "local" for the runs recorded from a terminal.
var historyEvents = append(slices.Clone(GitHubEvents), "local")

// CheckEvent returns an UnknownError when event is no GitHub event; the
// known ones the error lists are those the command acts on (supported).
func CheckEvent(input, event string, supported []string) error {
	if event == "" || slices.Contains(GitHubEvents, event) {
		return nil
	}
	return &UnknownError{Input: input, What: "event", Name: event, Known: supported}
}

// CheckHistoryEvents checks a history filter's events (--events): each is
// a GitHub event or local.
func CheckHistoryEvents(events []string) error {
	for _, e := range events {
		if !slices.Contains(historyEvents, e) {
			return &UnknownError{Input: "--events", What: "event", Name: e, Known: []string{"schedule", "push", "pull_request", "workflow_dispatch", "local"}}
		}
	}
	return nil
}

// CheckStageNames checks --only and --skip: each names a stage of the
// roster or a backend.
func CheckStageNames(input string, names []string, t *policy.Tables) error {
	var known []string
	for _, s := range t.Stages() {
		known = append(known, s.Name)
	}
	for _, b := range policy.Backends() {
		known = append(known, string(b))
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return &UnknownError{Input: input, What: "stage or backend", Name: n, Known: known}
		}
	}
	return nil
}

// checkSuiteName returns an UnknownError when suite is a suite of no
// backend; a suite of another backend gets run_suite.py's own error later.
func checkSuiteName(input, suite string, b policy.Backend, t *policy.Tables) error {
	for _, x := range policy.Backends() {
		if slices.Contains(t.SuitesOf(x), suite) {
			return nil
		}
	}
	known := t.SuitesOf(b)
	if len(known) == 0 {
		return nil
	}
	return &UnknownError{Input: input, What: string(b) + " suite", Name: suite, Known: known}
}

// LabelWarnings warns about each label that looks like a CI trigger
// (run-ci-..., run-on-...) but that the checkout's labels.py and workflows
// do not know: Miles ignores it quietly, so a typo would select nothing.
// from names where the labels came from ("--labels", "the PR's labels").
// The answer itself stays Miles'.
func LabelWarnings(t *policy.Tables, labels []string, from string) []Message {
	var out []Message
	known := t.TriggerLabels()
	seen := map[string]bool{}
	for _, l := range labels {
		if seen[l] || !policy.IsTriggerShaped(l) || slices.Contains(known, l) {
			continue
		}
		seen[l] = true
		text := fmt.Sprintf("%s: %s is not a label this checkout knows (tests/ci/labels.py), so it selects nothing", from, l)
		if n := nearest.Name(l, known); n != "" {
			text += fmt.Sprintf("; did you mean %s?", n)
		}
		out = append(out, Warning(text))
	}
	return out
}
