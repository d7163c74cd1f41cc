package usecase

import (
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
		cadence, labels = wp.Cadence, wp.RawLabels
	}
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
