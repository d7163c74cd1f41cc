package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/radixark/miles-ci/checkoutpy"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/policy"
)

// PolicyRequest is what the resolve-ci-policy step is given: the trigger
// facts, optionally a pull request read with --pr, and the changed files.
type PolicyRequest struct {
	// Repo is the Miles checkout whose test registry decides the GPU stages.
	Repo string
	// Tables are the checkout's CI tables (LoadTables of Repo).
	Tables *policy.Tables
	// Trigger holds the facts the caller gave; with PR, the ones it did not
	// give (Given) come from the pull request.
	Trigger policy.Trigger
	// PR is the pull request of --pr, or nil.
	PR *github.PR
	// Given names the trigger facts (Event, PRLabels) and the diff (Diff)
	// the caller gave itself: the pull request does not override them.
	Given Given
	// ReadDiff reads the --changed-files diff (nil: there is none), only on a
	// pull request and only when the PR's own files do not stand in for it.
	// unusable says why a diff cannot be used (then no stage is skipped, rules
	// §4); err is a failure to reach it at all.
	ReadDiff func() (diff []byte, unusable string, err error)
	// Registry gives the checkout's test registry, when the answer needs it,
	// from the caller's one read of it (verify asks hundreds of questions of
	// one checkout, a ci run's policy jobs share the run's); nil reads it.
	Registry func() (*policy.Registry, error)
	// Frontend is the front end that asks: its messages spell its flags.
	Frontend Frontend
}

// Validate checks the policy request's arguments before a pull request is
// read (Frontend spells the flags in the message).
func (req PolicyRequest) Validate() error {
	if req.Trigger.Event == "" && req.Trigger.CadenceOverride == "" && !req.Given.PR {
		env := ""
		if req.Frontend.EnvFallback {
			env = "set EVENT_NAME, or "
		}
		return fmt.Errorf("--event is required (or %sgive --cadence-override or %s)", env, req.Frontend.PR)
	}
	return CheckEvent("--event", req.Trigger.Event, policyEvents)
}

// PRLabelsJSON is a list of label names as the trigger's PR_LABELS_JSON
// ("" for nil: not given).
func PRLabelsJSON(labels []string) string {
	if labels == nil {
		return ""
	}
	b, _ := json.Marshal(labels) // a []string always encodes
	return string(b)
}

// PolicyAnswer is the resolved policy, the four step outputs, and on a pull
// request the stage selection (with why the diff was unusable, if it was).
type PolicyAnswer struct {
	Trigger   policy.Trigger
	Policy    policy.WorkflowPolicy
	Outputs   policy.Outputs
	Selection *policy.StageSelection
	// Messages holds the warning that the diff was unusable, if it was.
	Messages []Message
}

// PolicyJSON is policy's JSON answer (the CLI's --json and the module's):
// the step outputs and, on a pull request, the stages its diff leaves
// runnable and those it affects, as the text shows them (runnable left out
// where it was not worked out: an unusable diff that skips no stage).
type PolicyJSON struct {
	policy.Outputs
	Runnable *[]string `json:"runnable,omitempty"`
	Affected *[]string `json:"affected,omitempty"`
}

// JSON is the answer as PolicyJSON.
func (a PolicyAnswer) JSON() PolicyJSON {
	out := PolicyJSON{Outputs: a.Outputs}
	if a.Selection != nil {
		affected := append([]string{}, a.Selection.Affected...)
		out.Affected = &affected
		if a.Selection.RunnableKnown() {
			runnable := append([]string{}, a.Selection.Runnable...)
			out.Runnable = &runnable
		}
	}
	return out
}

// PRTrigger fills the trigger facts the caller did not give from a pull
// request: the event is pull_request and the labels are the PR's.
func PRTrigger(t policy.Trigger, pr *github.PR, given Given) policy.Trigger {
	f := TriggerFacts{Event: t.Event, PRLabelsJSON: t.PRLabelsJSON}.FromPR(pr, given)
	t.Event, t.PRLabelsJSON = f.Event, f.PRLabelsJSON
	return t
}

// Policy resolves cadence, labels, fast-fail and, on a pull request, the GPU
// stages its diff skips, as ci_policy.py does. A diff that cannot be used
// skips no stage (rules §4) and the answer says why.
func Policy(req PolicyRequest) (PolicyAnswer, error) {
	if err := req.Tables.OlderPolicyStep(); err != nil {
		return PolicyAnswer{}, err
	}
	trig := req.Trigger
	trig.Tables = req.Tables
	if req.PR != nil {
		trig = PRTrigger(trig, req.PR, req.Given)
	}
	wp, err := policy.ResolveTrigger(trig)
	if err != nil {
		return PolicyAnswer{}, err
	}
	ans := PolicyAnswer{Trigger: trig, Policy: wp,
		Outputs: req.Tables.Outputs(wp, nil)}
	if trig.Event == policy.EventPullRequest {
		ans.Messages = LabelWarnings(req.Tables, wp.RawLabels, PRLabelsFrom)
	}
	// Like ci_policy.py, a pull request prunes GPU stages even when a called
	// workflow's cadence override decides the cadence.
	if trig.Event != policy.EventPullRequest {
		return ans, nil
	}
	var diff []byte
	unusable := ""
	switch {
	case req.PR != nil && !req.Given.Diff:
		diff, unusable = req.PR.NameStatus()
	case req.ReadDiff != nil:
		if diff, unusable, err = req.ReadDiff(); err != nil {
			return PolicyAnswer{}, err
		}
	}
	if unusable == "" {
		unusable = policy.DiffUnusable(diff)
	}
	var sel policy.StageSelection
	note := ""
	if req.Tables.SelectionReadsRegistry(unusable) {
		read := req.Registry
		if read == nil {
			read = func() (*policy.Registry, error) { return req.Tables.LoadRegistry(req.Repo) }
		}
		reg, err := read()
		if err != nil {
			return PolicyAnswer{}, err
		}
		if sel, note, err = selectStages(reg, wp, diff, unusable); err != nil {
			return PolicyAnswer{}, err
		}
	} else {
		// The checkout's ci_policy.py reads no registration here (rules §4).
		sel = policy.UnusableDiffSelection(req.Tables, unusable)
		note = sel.DiffNote()
	}
	ans.Selection, ans.Outputs = &sel, req.Tables.Outputs(wp, sel.Skipped)
	if note != "" {
		ans.Messages = append(ans.Messages, Warning(note))
	}
	return ans, nil
}

// PolicyOfCheckout answers req with the checkout's own ci_policy: the
// trigger facts (with a pull request, its facts where the caller gave none)
// and the diff (the pull request's files unless --changed-files was given;
// an unusable diff is none).
func PolicyOfCheckout(ctx context.Context, c *Checkout, req PolicyRequest) (checkoutpy.CheckoutPolicy, error) {
	trig := req.Trigger
	if req.PR != nil {
		trig = PRTrigger(trig, req.PR, req.Given)
	}
	var diff []byte
	switch {
	case req.PR != nil && !req.Given.Diff:
		if d, why := req.PR.NameStatus(); why == "" {
			diff = d
		}
	case req.ReadDiff != nil:
		d, unusable, err := req.ReadDiff()
		if err != nil {
			return checkoutpy.CheckoutPolicy{}, err
		}
		if unusable == "" {
			diff = d
		}
	}
	return c.Policy(ctx, trig, diff)
}

// ReadChangedFiles reads a --changed-files diff for PolicyRequest.ReadDiff;
// shown names the file in the reason it is unusable ("--changed-files F").
// A file that cannot be read makes the diff unusable rather than failing the
// call: as the workflow does, a missing diff skips no GPU stage (rules §4).
// An empty file is an empty diff, not a missing one.
func ReadChangedFiles(path, shown string) (diff []byte, unusable string) {
	diff, err := fsinput.ReadFile(path, fsinput.ChangedFiles)
	if fe := (*fsinput.Error)(nil); errors.As(err, &fe) {
		return nil, shown + " " + fe.Problem
	} else if err != nil {
		return nil, shown + ": " + err.Error()
	}
	if diff == nil {
		diff = []byte{}
	}
	return diff, ""
}
