package usecase

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/checkoutpy"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/policy"
)

// Message is what a command tells the person running it beside its answer:
// an annotation level ("notice" or "warning") and one or more lines of text.
// The use cases return them in order, even with an error; the CLI prints
// them as ::notice:: and ::warning:: lines, the module on stderr.
type Message struct {
	Level string
	Text  string
}

// Notice and Warning are a use case's messages to the user, by level.
func Notice(text string) Message  { return Message{Level: "notice", Text: text} }
func Warning(text string) Message { return Message{Level: "warning", Text: text} }

// CheckSource checks that dir (a module's --source, exported) is a Miles
// checkout, with the module's fix in the message.
func CheckSource(dir string) error {
	_, err := policy.CheckCheckout(dir)
	var ce *policy.CheckoutError
	if errors.As(err, &ce) {
		return fmt.Errorf("source %s; pass --source the folder of a Miles checkout (the one that holds tests/)", ce.Problem)
	}
	return err
}

// LoadTables reads the CI tables of the checkout at repo, with a notice when
// some are the built-in ones. shown names the checkout in that notice ("": its
// folder; the module says "source", not the folder it exported the source to).
func LoadTables(repo, shown string) (*policy.Tables, []Message, error) {
	t, err := policy.LoadTables(repo)
	if err != nil {
		return nil, nil, err
	}
	return t, fallbackNote(t, repo, shown), nil
}

// fallbackNote is the notice of the tables that are the built-in ones, if any.
func fallbackNote(t *policy.Tables, repo, shown string) []Message {
	note := t.FallbackNote(repo)
	if note == "" {
		return nil
	}
	if shown != "" {
		note = strings.Replace(note, fsinput.FolderName(repo), shown, 1)
	}
	return []Message{Notice(note)}
}

// loadRegistry reads the checkout's tables and test registry at once
// (policy.LoadTablesAndRegistry), with LoadTables' notice, which comes before
// a registry's fault as when the two are read one after the other.
func loadRegistry(repo, shown string) (*policy.Tables, *policy.Registry, []Message, error) {
	tables, reg, err := policy.LoadTablesAndRegistry(repo)
	if tables == nil {
		return nil, nil, nil, err
	}
	return tables, reg, fallbackNote(tables, repo, shown), err
}

// PlanRequest is what `plan` is given, by either front end; Validate holds
// its argument rules.
type PlanRequest struct {
	// Repo is the Miles checkout; Shown names it in messages (see LoadTables).
	Repo, Shown string
	// Request is the run_suite.py request; with All, its HW, Suite and
	// Partition are ignored and every stage and shard of the roster is planned.
	Request policy.PlanRequest
	All     bool
	// PartitionID and PartitionSize are the shard arguments as given (nil:
	// not given); Validate checks them and sets Request.Partition.
	PartitionID, PartitionSize *int
	// HasTestsOutput says the caller asked whether the shard has tests
	// (the CLI's --github-output).
	HasTestsOutput bool
	// PR is the pull request of --pr (nil without it), read with its changed
	// files when All is set. Its cadence and labels fill those Given does not
	// name; with All, the stages its diff skips plan nothing.
	PR    *github.PR
	Given Given
	// Planner says who answers; with PlannerCheckout, Checkout opens the
	// checkout's own tests/ci code (local Python, or the module's container).
	Planner  Planner
	Checkout func() (*Checkout, error)
}

// PlanAnswer is the plan of each requested shard, in roster order with All.
type PlanAnswer struct {
	// Plans are miles-ci's plans (the miles-ci planner).
	Plans []*policy.Plan
	// Checkout are the checkout's own --list-only answers (the checkout
	// planner): the text, and the plan read back from it when it can be.
	Checkout []checkoutpy.CheckoutPlan
	// PRPolicy is the pull request's resolved policy (nil without a PR, and
	// with the checkout planner); Selection its stage selection with All.
	PRPolicy  *policy.WorkflowPolicy
	Selection *policy.StageSelection
	// Roster is the checkout's stage roster, for the step summary.
	Roster []policy.Stage
	// HasTests is has_tests for --github-output: the first shard has an
	// enabled test (miles-ci planner).
	HasTests bool
	// Pool is the B200 pool plan of the one suite planned, when it is a
	// pool suite (rules §11.8), else nil.
	Pool     *policy.PoolPlan
	Messages []Message
}

// Validate checks plan's arguments (run_suite.py's, and --all), one message
// per rule, and sets the partition of the request.
func (in *PlanRequest) Validate() error {
	if in.All && in.HasTestsOutput {
		return errors.New("--github-output says whether one shard has tests; drop --all")
	}
	if (in.PartitionID == nil) != (in.PartitionSize == nil) {
		// argparse's words: the workflows' run_suite.py says the same.
		//lint:ignore ST1005 the reference's error text, verbatim (parity with run_suite.py)
		return errors.New("--auto-partition-id and --auto-partition-size must be specified together.")
	}
	if in.PartitionSize != nil {
		part := &policy.Partition{ID: *in.PartitionID, Size: *in.PartitionSize}
		if err := part.Validate(); err != nil {
			return err
		}
		in.Request.Partition = part
	}
	switch {
	case in.All && (in.Request.HW != "" || in.Request.Suite != "" || in.Request.Partition != nil):
		return errors.New("--all plans every suite and shard; drop --hw, --suite and --auto-partition-*")
	case !in.All && (in.Request.HW == "" || in.Request.Suite == ""):
		return errors.New("--hw and --suite are required (or --all)")
	}
	if in.Request.Cadence == "" {
		in.Request.Cadence = policy.Regular
	}
	return nil
}

// Plan answers `plan`: what one suite shard (or, with All, every shard of the
// roster) runs, as run_suite.py --list-only shows it.
func Plan(ctx context.Context, in PlanRequest) (PlanAnswer, error) {
	if err := in.Validate(); err != nil {
		return PlanAnswer{}, err
	}
	if in.Planner == PlannerCheckout {
		return checkoutPlan(ctx, in)
	}
	var ans PlanAnswer
	tables, reg, msgs, err := loadRegistry(in.Repo, in.Shown)
	ans.Messages = msgs
	if err != nil {
		return ans, err
	}
	ans.Roster = tables.Stages()
	base := in.Request
	var skipped []string
	if in.PR != nil {
		// The PR decides cadence and labels as the workflow would, unless the
		// caller named them; with All it also decides the skipped stages.
		wp, err := PRPolicy(in.PR, tables)
		if err != nil {
			return ans, err
		}
		base = fillFromPR(base, in.Given, wp.Cadence, wp.RawLabels)
		ans.PRPolicy = &wp
		if in.All {
			sel, note, err := SelectStages(reg, wp, in.PR)
			if err != nil {
				return ans, err
			}
			if note != "" {
				ans.Messages = append(ans.Messages, Warning(note))
			}
			ans.Selection, skipped = &sel, sel.Skipped
		}
	}
	if !in.All {
		if err := checkSuiteName("--suite", base.Suite, base.HW, tables); err != nil {
			return ans, err
		}
	}
	from := "--labels"
	if in.PR != nil && !in.Given.Labels {
		from = PRLabelsFrom
	}
	ans.Messages = append(ans.Messages, LabelWarnings(tables, base.Labels, from)...)
	reqs := []policy.PlanRequest{base}
	if in.All {
		var unplannable []policy.Stage
		reqs, unplannable = expandRoster(ans.Roster, base, skipped)
		for _, st := range ans.Roster {
			if slices.Contains(skipped, st.Name) {
				// The workflow never starts a skipped stage's job, so it plans nothing.
				ans.Messages = append(ans.Messages, Notice(st.Name+" is skipped on "+in.PR.Ref()+" (rules §4): no shard of it runs"))
			}
		}
		if len(unplannable) > 0 {
			st := unplannable[0]
			// A pool job's gate names a suite that no backend lists (lint
			// reports it too): there is no run_suite.py --hw to plan it with.
			return ans, fmt.Errorf("stage %s (job %s, %s) is in no backend's CI_SUITES, so it cannot be planned; add it to CI_SUITES in %s or fix the job's skipped_stages gate", st.Name, st.Job, st.Source, policy.RunSuiteFile)
		}
	}
	for _, r := range reqs {
		p, err := policy.BuildPlan(reg, r)
		if err != nil {
			return ans, err
		}
		ans.Plans = append(ans.Plans, p)
	}
	if len(ans.Plans) > 0 {
		// The ignored-label warnings are the same for every plan of one run.
		for _, w := range ans.Plans[0].Warnings {
			ans.Messages = append(ans.Messages, Warning(w))
		}
		ans.HasTests = len(ans.Plans[0].Enabled) > 0
	}
	if !in.All {
		var msgs []Message
		ans.Pool, msgs = poolOfSuite(reg, base)
		ans.Messages = append(ans.Messages, msgs...)
	}
	return ans, nil
}

// CheckoutNotice says that an answer is the checkout's own, and what ran it.
func CheckoutNotice(c *Checkout) Message {
	return Notice("--planner checkout: the answer is the checkout's own tests/ci code (" + c.Root + "), run with " + c.Python.String())
}

// ReadPlans are the answer's plans: miles-ci's, or the checkout's read back
// from its --list-only text (an error when one cannot be).
func (a PlanAnswer) ReadPlans() ([]*policy.Plan, error) {
	if a.Checkout == nil {
		return a.Plans, nil
	}
	var out []*policy.Plan
	for _, p := range a.Checkout {
		if p.Plan == nil {
			return nil, fmt.Errorf("the checkout's plan cannot be written as JSON: %w", p.ReadErr)
		}
		out = append(out, p.Plan)
	}
	return out, nil
}

// checkoutPlan is Plan with the checkout planner: the checkout's own
// run_suite.py --list-only, with a pull request's cadence, labels and (with
// All) skipped stages as the checkout's own ci_policy resolves them.
func checkoutPlan(ctx context.Context, in PlanRequest) (PlanAnswer, error) {
	var ans PlanAnswer
	c, err := in.Checkout()
	if err != nil {
		return ans, err
	}
	ans.Messages = append(ans.Messages, CheckoutNotice(c))
	base := in.Request
	var skipped []string
	if in.PR != nil {
		var diff []byte
		if in.All {
			diff, _ = in.PR.NameStatus()
		}
		pol, err := c.Policy(ctx, in.PR.Trigger(), diff)
		if err != nil {
			return ans, err
		}
		base = fillFromPR(base, in.Given, pol.Outputs.Cadence, pol.Outputs.RawLabels)
		skipped = pol.Outputs.SkippedStages
	}
	reqs := []policy.PlanRequest{base}
	if in.All {
		tables, msgs, err := LoadTables(in.Repo, in.Shown)
		ans.Messages = append(ans.Messages, msgs...)
		if err != nil {
			return ans, fmt.Errorf("plan --all needs the checkout's stage roster: %w", err)
		}
		// A stage no backend lists is left out: the checkout's own
		// run_suite.py has no --hw to be asked with.
		reqs, _ = expandRoster(tables.Stages(), base, skipped)
	}
	if ans.Checkout, err = c.Plans(ctx, reqs); err != nil {
		return ans, err
	}
	return ans, nil
}

// fillFromPR gives a plan request the pull request's cadence and labels
// where the caller did not name them.
func fillFromPR(r policy.PlanRequest, given Given, cadence policy.Cadence, labels []string) policy.PlanRequest {
	if !given.Cadence {
		r.Cadence = cadence
	}
	if !given.Labels {
		r.Labels = labels
	}
	return r
}

// expandRoster is plan --all's requests: every shard of every stage of the
// roster in order, but the skipped ones; the stages no backend lists cannot
// be planned and are returned apart.
func expandRoster(stages []policy.Stage, base policy.PlanRequest, skipped []string) (reqs []policy.PlanRequest, unplannable []policy.Stage) {
	for _, st := range stages {
		if slices.Contains(skipped, st.Name) {
			continue
		}
		if st.Backend == "" {
			unplannable = append(unplannable, st)
			continue
		}
		r := base
		r.HW, r.Suite = st.Backend, st.Name
		n := st.ShardsFor(r.Cadence)
		if n <= 1 {
			reqs = append(reqs, r)
			continue
		}
		for i := 0; i < n; i++ {
			r.Partition = &policy.Partition{ID: i, Size: n}
			reqs = append(reqs, r)
		}
	}
	return reqs, unplannable
}

// SelectStages is the pull request's GPU stage selection (rules §4) from its
// changed files. A diff that cannot be used skips no stage; note then says
// why, as a warning for the person running the command.
func SelectStages(reg *policy.Registry, wp policy.WorkflowPolicy, pr *github.PR) (sel policy.StageSelection, note string, err error) {
	diff, why := pr.NameStatus()
	return selectStages(reg, wp, diff, why)
}

// selectStages is the stage selection from a diff, or, when unusable says why
// the diff cannot be used (or there is none), the selection that skips
// nothing, with a note that says why (the caller's reason, not "no
// changed-files input").
func selectStages(reg *policy.Registry, wp policy.WorkflowPolicy, diff []byte, unusable string) (sel policy.StageSelection, note string, err error) {
	if unusable != "" {
		diff = nil
	}
	if sel, err = policy.SelectPRStages(reg, wp, diff); err != nil {
		return sel, "", err
	}
	if unusable != "" {
		sel.DiffUnusable = unusable
	}
	if sel.DiffUnusable != "" {
		note = sel.DiffNote()
	}
	return sel, note, nil
}
