package usecase

import (
	"context"

	"github.com/radixark/miles-ci/checkoutpy"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
)

// ExplainInputs are what `explain` is given: a test file, and either the
// cadence and labels, or the trigger facts (or a pull request) that decide them.
type ExplainInputs struct {
	Repo, Shown string
	File        string
	Cadence     policy.Cadence
	Labels      []string
	MatchAll    bool
	// Trigger, when set, decides cadence and labels as the workflow would;
	// with PR, the facts the caller did not give (Given.Event,
	// Given.PRLabels) are the pull request's.
	Trigger *policy.Trigger
	PR      *github.PR
	Given   Given
}

// ExplainAnswer is, for each registration of the file, whether the run
// policy selects it, where it runs and why.
type ExplainAnswer struct {
	File     policy.FileExplanation
	Policy   policy.RunPolicy
	Messages []Message
}

// Explain answers `explain` with miles-ci's rules.
func Explain(in ExplainInputs) (ExplainAnswer, error) {
	var ans ExplainAnswer
	tables, msgs, err := LoadTables(in.Repo, in.Shown)
	ans.Messages = msgs
	if err != nil {
		return ans, err
	}
	cadence, labels := in.Cadence, in.Labels
	from := "--labels"
	if in.Trigger != nil {
		trig := *in.Trigger
		if in.PR != nil {
			trig = PRTrigger(trig, in.PR, in.Given)
		}
		trig.Tables = tables
		wp, err := policy.ResolveTrigger(trig)
		if err != nil {
			return ans, err
		}
		cadence, labels, from = wp.Cadence, wp.RawLabels, PRLabelsFrom
	}
	ans.Messages = append(ans.Messages, LabelWarnings(tables, labels, from)...)
	if ans.Policy, err = tables.ResolveRunPolicy(cadence, labels, in.MatchAll); err != nil {
		return ans, err
	}
	reg, err := tables.LoadRegistry(in.Repo)
	if err != nil {
		return ans, err
	}
	ans.File, err = policy.Explain(reg, in.File, ans.Policy)
	return ans, err
}

// ExplainOfCheckout answers `explain --planner checkout`: each registration
// of file in the checkout's own registry, and whether the checkout's own
// --list-only of its suite (in every shard the roster gives it under the
// cadence) lists it. A checkout whose tables miles-ci cannot read asks one
// shard of each suite.
func ExplainOfCheckout(ctx context.Context, c *Checkout, repo, file string, base policy.PlanRequest) ([]checkoutpy.ExplainVerdict, policy.Cadence, error) {
	cadence := base.Cadence
	if cadence == "" {
		cadence = policy.Regular
	}
	shards := func(string) int { return 1 }
	if tables, err := policy.LoadTables(repo); err == nil {
		shards = func(suite string) int {
			if st, ok := tables.Stage(suite); ok && !st.External {
				return st.ShardsFor(cadence)
			}
			return 1
		}
	}
	v, err := c.Explain(ctx, file, base, shards)
	return v, cadence, err
}
