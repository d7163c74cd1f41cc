package main

import (
	"context"
	"fmt"
	"os"

	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// Stages returns the stage roster that applies to the source.
// It gives the backend, runners, shards, parallelism, needs and image of every
// CI stage, read from its workflows and CI tables; its json is `miles-ci
// stages --repo DIR --json`.
// A source that is not a Miles checkout (no tests/) gives the built-in roster
// of rules §1 (`miles-ci stages --json`) and says so in its messages.
func (m *MilesCi) Stages(ctx context.Context) (*Roster, error) {
	return withExport(ctx, m.Source, func(dir string) (*Roster, error) {
		roster, msgs, err := usecase.Roster(usecase.RosterRequest{Repo: dir, Shown: "source", Given: usecase.Given{Repo: true}, OrBuiltIn: true})
		if err != nil {
			return nil, err
		}
		return answerOf[Roster](roster, msgs)
	})
}

// Plan returns what one suite shard runs, as run_suite.py --list-only shows it.
// Its plans are one shard's, its json `miles-ci plan --repo DIR ... --json`;
// with --all, every shard of every stage of the roster, and its json the
// JSON array of `miles-ci plan --all --json`.
// With with-pr, the pull request decides cadence and labels
// unless they are given, and with --all the stages its diff skips plan nothing.
// The answer is kept for one session: with-pr reads the pull request anew in each.
// +cache="session"
func (m *MilesCi) Plan(
	ctx context.Context,
	// Hardware backend (required unless --all).
	// +optional
	hw Backend,
	// Suite (= stage) name, e.g. stage-a-cpu (required unless --all).
	// +optional
	suite string,
	// Plan every suite and every shard of the roster that applies to the checkout.
	// +optional
	all bool,
	// CI cadence (default regular).
	// +optional
	cadence Cadence,
	// Raw PR labels, e.g. run-ci-megatron.
	// +optional
	labels []string,
	// Include every known label, as a manual dispatch of a GPU stage does.
	// +optional
	matchAllLabels bool,
	// 0-based shard index; give it together with autoPartitionSize (absent: not partitioned), as run_suite.py's --auto-partition-id.
	// +optional
	autoPartitionId *int,
	// Number of shards; give it together with autoPartitionId (absent: not partitioned).
	// +optional
	autoPartitionSize *int,
	// Keep running after a failed test.
	// +optional
	continueOnError bool,
	// Who plans: miles-ci (the default) or checkout (the checkout's own
	// run_suite.py --list-only, run in a Python 3.11 container).
	// +optional
	planner Planner,
) (*PlanAnswer, error) {
	who := plannerOf(planner)
	in := usecase.PlanRequest{Shown: "source", All: all, Planner: who, PartitionID: autoPartitionId, PartitionSize: autoPartitionSize,
		Request: policy.PlanRequest{HW: policy.Backend(hw), Suite: suite, Cadence: policy.Cadence(cadence), Labels: labels, MatchAllLabels: matchAllLabels, ContinueOnError: continueOnError},
		Given:   usecase.Given{Cadence: cadence != "", Labels: labels != nil}}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	var err error
	if in.PR, err = m.pullRequestOf(ctx, all); err != nil {
		return nil, err
	}
	return withCheckout(ctx, m.Source, func(dir string) (*PlanAnswer, error) {
		in.Repo = dir
		in.Checkout = func() (*usecase.Checkout, error) { return checkout(dir, m.Source) }
		ans, err := usecase.Plan(ctx, in)
		if err != nil {
			return nil, err
		}
		plans, err := ans.ReadPlans()
		if err != nil {
			return nil, err
		}
		if all {
			return answerOf[PlanAnswer](plans, ans.Messages)
		}
		return planAnswer(plans[0], ans.Messages)
	})
}

// Policy resolves the run policy of the trigger facts.
// It gives cadence, labels, fast-fail and the skipped GPU stages; its json is
// `miles-ci policy --event E ... --json`. With
// with-pr, the pull request is the trigger (event pull_request, its
// labels and changed files) for every fact not given here.
// The answer is kept for one session: with-pr reads the pull request anew in each.
// +cache="session"
func (m *MilesCi) Policy(
	ctx context.Context,
	// GitHub event (required without with-pr or --cadence-override).
	// +optional
	event Event,
	// Cron expression of a scheduled run.
	// +optional
	schedule string,
	// The PR's label names, e.g. run-ci-megatron (with event pull_request).
	// +optional
	prLabels []string,
	// A called workflow's cadence input; it wins over the event.
	// +optional
	cadenceOverride Cadence,
	// Output of `git diff --name-status -z -M HEAD^1 HEAD` for a pull request (with --pr: instead of the PR's files).
	// +optional
	changedFiles *dagger.File,
	// Who resolves: miles-ci (the default) or checkout (the checkout's own
	// python -m tests.ci.ci_policy, run in a Python 3.11 container).
	// +optional
	planner Planner,
) (*PolicyAnswer, error) {
	req := usecase.PolicyRequest{
		Trigger: policy.Trigger{Event: string(event), Schedule: schedule, PRLabelsJSON: usecase.PRLabelsJSON(prLabels), CadenceOverride: string(cadenceOverride)},
		Given:   usecase.Given{Event: event != "", PRLabels: prLabels != nil, Diff: changedFiles != nil, PR: m.Pr != 0}, Frontend: usecase.Module}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	who := plannerOf(planner)
	// The PR's changed files are needed unless a diff file was given.
	var err error
	if req.PR, err = m.pullRequestOf(ctx, !req.Given.Diff); err != nil {
		return nil, err
	}
	return withCheckout(ctx, m.Source, func(dir string) (*PolicyAnswer, error) {
		if changedFiles != nil {
			req.ReadDiff = func() ([]byte, string, error) { return readChangedFiles(ctx, changedFiles, dir+".changed-files") }
		}
		if who == usecase.PlannerCheckout {
			return checkoutPolicyOf(ctx, dir, m.Source, req)
		}
		// As `miles-ci policy` does: the checkout's tables, then on a pull
		// request the GPU stages its diff skips.
		tables, msgs, err := usecase.LoadTables(dir, "source")
		if err != nil {
			return nil, err
		}
		req.Repo, req.Tables = dir, tables
		ans, err := usecase.Policy(req)
		if err != nil {
			return nil, err
		}
		return answerOf[PolicyAnswer](ans.JSON(), append(msgs, ans.Messages...))
	})
}

// readChangedFiles reads the --changed-files File, exported to path (not read
// as a string: a diff is NUL-separated and need not be UTF-8), as `miles-ci
// policy` reads its file; the reason it is unusable names the argument, not
// the export path.
func readChangedFiles(ctx context.Context, f *dagger.File, path string) ([]byte, string, error) {
	if _, err := f.Export(ctx, path); err != nil {
		return nil, "", fmt.Errorf("export --changed-files: %w", err)
	}
	defer os.Remove(path)
	diff, unusable := usecase.ReadChangedFiles(path, "--changed-files")
	return diff, unusable, nil
}

// pullRequestOf is the pull request of --pr (nil without it), read once for
// one call; with files, its changed files too.
func (m *MilesCi) pullRequestOf(ctx context.Context, files bool) (*github.PR, error) {
	s, err := m.pullRequest(ctx, files)
	if err != nil || s == "" {
		return nil, err
	}
	return github.DecodePR(s)
}

// planAnswer is one shard's plan: its plans that one, its json the plan's.
func planAnswer(p *policy.Plan, msgs []usecase.Message) (*PlanAnswer, error) {
	js, err := jsonString(p)
	if err != nil {
		return nil, err
	}
	return answerWith[PlanAnswer]([]*policy.Plan{p}, js, msgs, nil)
}
