package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// Stages returns, as JSON, the stage roster that applies to the source:
// backend, runners, shards, parallelism, needs and image of every CI stage,
// read from its workflows and CI tables (`miles-ci stages --repo DIR --json`).
// A source that is not a Miles checkout (no tests/) gives the built-in roster
// of rules §1 (`miles-ci stages --json`) and says so on stderr.
// +cache="session"
func (m *MilesCi) Stages(ctx context.Context) (string, error) {
	return withExport(ctx, m.Source, func(dir string) (string, error) {
		if _, err := policy.CheckCheckout(dir); err != nil {
			var ce *policy.CheckoutError
			if !errors.As(err, &ce) {
				return "", err
			}
			fmt.Fprint(os.Stderr, ghoutput.Annotation("notice", "", 0, "source "+ce.Problem+"; showing the built-in roster of rules §1"))
			return jsonString(policy.Roster())
		}
		tables, msgs, err := usecase.LoadTables(dir, "source")
		printMessages(msgs)
		if err != nil {
			return "", err
		}
		return jsonString(tables.Stages())
	})
}

// Plan returns, as JSON, what one suite shard runs, as run_suite.py --list-only
// shows it (`miles-ci plan --repo DIR ... --json`); with --all, every shard of
// every stage of the roster, as a JSON array (`miles-ci plan --all --json`).
// With with-pr, the pull request decides cadence and labels
// unless they are given, and with --all the stages its diff skips plan nothing.
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
	// 0-based shard index; give it together with partitionSize (absent: not partitioned).
	// +optional
	partitionId *int,
	// Number of shards; give it together with partitionId (absent: not partitioned).
	// +optional
	partitionSize *int,
	// Keep running after a failed test.
	// +optional
	continueOnError bool,
	// Who plans: miles-ci (the default) or checkout (the checkout's own
	// run_suite.py --list-only, run in a Python 3.11 container).
	// +optional
	planner string,
) (string, error) {
	who, err := parsePlanner(planner)
	if err != nil {
		return "", err
	}
	in := usecase.PlanInputs{Shown: "source", All: all, Planner: who,
		Request: policy.PlanRequest{Cadence: policy.Regular, Labels: labels, MatchAllLabels: matchAllLabels, ContinueOnError: continueOnError},
		Given:   usecase.Given{Cadence: cadence != "", Labels: labels != nil}}
	if (partitionId == nil) != (partitionSize == nil) {
		return "", errors.New("--partition-id and --partition-size must be specified together")
	}
	switch {
	case all && (hw != "" || suite != "" || partitionSize != nil):
		return "", errors.New("--all plans every suite and shard; drop --hw, --suite and --partition-*")
	case !all && (hw == "" || suite == ""):
		return "", errors.New("--hw and --suite are required (or --all)")
	case !all:
		in.Request.HW = policy.Backend(hw)
		in.Request.Suite = suite
		if partitionSize != nil {
			in.Request.Partition = &policy.Partition{ID: *partitionId, Size: *partitionSize}
			if err := in.Request.Partition.Validate(); err != nil {
				return "", err
			}
		}
	}
	if cadence != "" {
		in.Request.Cadence = policy.Cadence(cadence)
	}
	if in.PR, err = m.pullRequestOf(ctx, all); err != nil {
		return "", err
	}
	return withCheckout(ctx, m.Source, func(dir string) (string, error) {
		in.Repo = dir
		in.Checkout = func() (*usecase.Checkout, error) { return checkout(dir, m.Source) }
		ans, err := usecase.Plan(ctx, in)
		printMessages(ans.Messages)
		if err != nil {
			return "", err
		}
		plans, err := ans.ReadPlans()
		if err != nil {
			return "", err
		}
		if all {
			return jsonString(plans)
		}
		return jsonString(plans[0])
	})
}

// Policy resolves cadence, labels, fast-fail and the skipped GPU stages from the
// trigger facts, as JSON (`miles-ci policy --event E ... --json`). With
// with-pr, the pull request is the trigger (event pull_request, its
// labels and changed files) for every fact not given here.
// +cache="session"
func (m *MilesCi) Policy(
	ctx context.Context,
	// GitHub event (required without with-pr or --cadence-override).
	// +optional
	event Event,
	// Cron expression of a scheduled run.
	// +optional
	schedule string,
	// The PR's label names as a JSON array, e.g. ["run-ci-megatron"].
	// +optional
	prLabelsJson string,
	// A called workflow's cadence input; it wins over the event.
	// +optional
	cadenceOverride Cadence,
	// Output of `git diff --name-status -z -M HEAD^1 HEAD` for a pull request (with --pr: instead of the PR's files).
	// +optional
	changedFiles *dagger.File,
	// Who resolves: miles-ci (the default) or checkout (the checkout's own
	// python -m tests.ci.ci_policy, run in a Python 3.11 container).
	// +optional
	planner string,
) (string, error) {
	if event == "" && cadenceOverride == "" && m.Pr == 0 {
		return "", errors.New("--event is required (or --cadence-override, or with-pr --number N)")
	}
	who, err := parsePlanner(planner)
	if err != nil {
		return "", err
	}
	req := usecase.PolicyRequest{
		Trigger:    policy.Trigger{Event: string(event), Schedule: schedule, PRLabelsJSON: prLabelsJson, CadenceOverride: string(cadenceOverride)},
		EventGiven: event != "", LabelsGiven: prLabelsJson != "", DiffGiven: changedFiles != nil}
	// The PR's changed files are needed unless a diff file was given.
	if req.PR, err = m.pullRequestOf(ctx, !req.DiffGiven); err != nil {
		return "", err
	}
	return withCheckout(ctx, m.Source, func(dir string) (string, error) {
		if changedFiles != nil {
			req.ReadDiff = func() ([]byte, string, error) { return readChangedFiles(ctx, changedFiles, dir+".changed-files") }
		}
		if who == usecase.PlannerCheckout {
			return checkoutPolicyOf(ctx, dir, m.Source, req)
		}
		// As `miles-ci policy` does: the checkout's tables, then on a pull
		// request the GPU stages its diff skips.
		tables, msgs, err := usecase.LoadTables(dir, "source")
		printMessages(msgs)
		if err != nil {
			return "", err
		}
		req.Repo, req.Tables = dir, tables
		ans, err := usecase.Policy(req)
		if err != nil {
			return "", err
		}
		printMessages(ans.Messages)
		return jsonString(ans.Outputs)
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
