// Package ci is the use case of the whole CI of one event, which `miles-ci
// ci` and the module's ci call: it lays out the jobs the checkout's PR
// workflows run (package cirun), on the checkout's tables read once, plans
// each stage once for all its shards on the stage-run path of package
// usecase, and runs them (EngineShards) or, without a runner, plans them (a
// dry run). It is apart from usecase, as the graph is to what a user asks: the
// questions and the one-shard runs do not link it.
package ci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/hostgpu"
	"github.com/radixark/miles-ci/hostlock"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/whatif"
)

// CIRequest is what `miles-ci ci` and the module's ci are given: the
// checkout, one event's trigger facts, the host and its limits, and (for a
// real run) who runs a shard.
type CIRequest struct {
	// Repo is the Miles checkout.
	Repo string
	// Event is pull_request, schedule, workflow_dispatch or release ("" =
	// pull_request with --pr, else an error).
	Event string
	// Action is a pull request's activity type ("" = synchronize; closed
	// runs nothing).
	Action string
	// Schedule is a scheduled run's cron.
	Schedule string
	// PRLabelsJSON are the PR's labels as a JSON array (pull_request).
	PRLabelsJSON string
	// PRBody, PRNumber and Fork are the pull request's facts.
	PRBody   string
	PRNumber int
	Fork     bool
	// ImageTag, SGLangInput and MegatronInput are the workflow_dispatch inputs.
	ImageTag, SGLangInput, MegatronInput string
	// Release is the lockfile of a release run (Event release).
	Release *deps.Lock
	// PR is the pull request --pr read, or nil; its facts fill what the
	// fields above leave out (Given).
	PR    *github.PR
	Given usecase.Given
	// ReadDiff reads --changed-files (nil: none; Given.Diff says it was
	// given); see PolicyRequest.
	ReadDiff func() ([]byte, string, error)
	// OpenCheckout, when set, opens the checkout's own tests/ci code to
	// plan with (--planner checkout); the answer says whose it is.
	OpenCheckout func() (*usecase.Checkout, error)

	// DryRun plans the graph and runs nothing: no engine, no lock, no
	// results (without Shards a run is a dry run too).
	DryRun bool

	// Host, MaxParallel, Only and Skip are the scheduler's options; Hosts,
	// when set, a fleet (--hosts) in place of Host, and Substitutes the
	// models a stage may run on instead of its own (rules §14). Host is the
	// one host as --gpus named it; with AllGPUs (--gpus all, or no --gpus)
	// it is every GPU Detect finds on this machine, and a dry run or a
	// what-if without --gpus (GPUsGiven false) on a machine that shows none
	// plans for stand-ins.
	Host        cirun.Host
	AllGPUs     bool
	GPUsGiven   bool
	Detect      cirun.Detect
	Hosts       []cirun.Host
	Substitutes []cirun.Substitute
	MaxParallel int
	Only, Skip  []string
	// Leaser is the host lock a real run leases each shard's devices in
	// (nil: none), and Retry ticks while a shard waits for devices
	// another process holds.
	Leaser cirun.Leaser
	Retry  <-chan time.Time
	// Shards runs one shard for real; nil is a dry run (no engine).
	Shards ShardRunner
	// Notify is told every job state change (cirun.Options.Notify).
	Notify func(cirun.JobReport)
	// Now is the clock of a real run.
	Now func() time.Time

	// HeadSHA is the checkout's commit as given (--head-sha); without it
	// Git says what is checked out (asked only by a run, or a re-run's
	// check). RunID is the run's id: with the event's facts they are the
	// run's facts in summary.json, which a re-run must share.
	HeadSHA, RunID string
	Git            usecase.Git
	// RerunFailed is the results folder of the earlier attempt this run
	// re-runs (--rerun-failed): its passed units are kept, the rest run
	// again, and its folder takes the new attempt's results unless Results
	// names another. Previous is that attempt read already.
	RerunFailed string
	Previous    *usecase.PreviousRun
	// Results is the folder a run writes (--results; "" for a new one the
	// front end names after the event).
	Results string
	// Predict has a run predict itself before it starts (ci --record keeps
	// the prediction beside what it measures): the answer's Prediction.
	Predict bool

	// WhatIf predicts the run instead of running it (issue 42): the graph,
	// placement and scheduler of a real run, each shard taking the time
	// Durations predicts on the scheduler's virtual clock, with no engine
	// and no host lock; the answer's Prediction says how it went.
	WhatIf bool
	// Durations are the test files' and shards' times from the runtime
	// history (nil: each file at its est_time, each shard the default
	// set-up): the estimates a run orders its shards by, and the times a
	// what-if predicts.
	Durations *whatif.Durations
	// ReadDurations, when set, reads Durations from the runtime history
	// for a run or a what-if (whatIf: a what-if, which cannot go on
	// without its history, where a run orders by est_time); a dry run
	// reads no history.
	ReadDurations func(whatIf bool) (*whatif.Durations, error)
}

// Validate checks which of the request's inputs go together, before
// anything is read (a hosts file, a pull request, the history): one
// message a rule, in the CLI's flags. CI calls it first.
func (r CIRequest) Validate() error {
	switch {
	case r.DryRun && r.Given.History:
		return errors.New("--events and --as-of choose the runtime history a run orders its shards by and a what-if predicts with; a dry run reads none")
	case r.WhatIf && (r.DryRun || r.RerunFailed != "" || r.Given.Record):
		return errors.New(WhatIfAlone)
	case r.GPUsGiven && (r.Given.Hosts || r.Hosts != nil):
		return errors.New("give --gpus (one host) or --hosts (a fleet), not both")
	case r.Given.PR && (r.Given.Event && r.Event != "pull_request" || r.Given.Schedule || r.Given.Release):
		return errors.New("--pr is a pull_request's facts; drop --event, --schedule and --release-lock")
	case r.MaxParallel < 0:
		return errors.New("--max-parallel must be 0 (as many as fit) or more")
	}
	return nil
}

// WhatIfAlone refuses a what-if with what runs or prints a run; the CLI
// says it too for --what-if with --mermaid, which the request does not
// carry.
const WhatIfAlone = "--what-if predicts a run and runs nothing: it goes with none of --dry-run, --mermaid, --rerun-failed and --record"

// ShardRunner runs a stage shard's request (stagerun.Prepare and Test on an
// engine) and builds a PR image.
type ShardRunner interface {
	RunShard(ctx context.Context, req stagerun.Request, u *cirun.Unit) cirun.Outcome
	BuildImage(ctx context.Context, tag string) (image string, err error)
}

// ShardPlan is what a dry run's shard would run: its run_suite.py command
// and plan.
type ShardPlan struct {
	Command string       `json:"command"`
	Plan    *policy.Plan `json:"plan,omitempty"`
}

// CIAnswer is the graph and its run.
type CIAnswer struct {
	// Mode says what the answer is: a plan, a prediction, a re-run that
	// had nothing to run, or a run.
	Mode     Mode
	Graph    *cirun.Graph
	Report   *cirun.Report
	Messages []usecase.Message
	// NothingToRerun says that the earlier attempt of a re-run had nothing
	// to re-run: Report is that attempt's, unchanged, and nothing ran.
	NothingToRerun bool
	// Prediction is a what-if's answer (WhatIf), and a run's own what-if
	// made before it started (Predict); nil otherwise.
	Prediction *whatif.Prediction
	// Results are a run's results (Ran): the folder's files, step summary,
	// layer reuse and failed shards; Dir the folder they go to ("" for none:
	// the module hands them back).
	Results *CIResults
	Dir     string
}

// Mode is what a ci answer holds.
type Mode string

// The modes of a ci answer.
const (
	// Planned: a dry run's graph, each shard that would run planned.
	Planned Mode = "planned"
	// Predicted: a what-if's graph and prediction.
	Predicted Mode = "predicted"
	// Kept: a re-run whose earlier attempt has nothing to re-run; its
	// report stands as it was.
	Kept Mode = "kept"
	// Ran: a run on the engine, with its results.
	Ran Mode = "ran"
)

// InputError is input the run cannot use as given (a --rerun-failed folder
// it cannot read): the command exits 2.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// CI is the whole CI of one event, as the front ends ask for it: it lays
// out the jobs the checkout's PR workflows run and plans them (DryRun),
// predicts them (WhatIf), or runs them on the front end's engine (Shards):
// the resolvers as miles-ci's own use cases, each stage shard through the
// stage-run path. A re-run (RerunFailed) keeps what passed, runs the rest
// again, and runs nothing when nothing failed. The host is the one --gpus
// names or the fleet's; a run leases its devices in the host lock. Beside
// an error, the answer holds what was to be said before it (the host's and
// the checkout's notices).
func CI(ctx context.Context, req CIRequest) (CIAnswer, error) {
	if err := req.Validate(); err != nil {
		return CIAnswer{}, &UsageError{Err: err}
	}
	var said []usecase.Message
	ans, err := answer(ctx, req, &said)
	if err != nil {
		return CIAnswer{Messages: said}, err
	}
	return ans, nil
}

// answer is CI; said gets the messages to say even when it fails.
func answer(ctx context.Context, req CIRequest, said *[]usecase.Message) (CIAnswer, error) {
	if req.ReadDurations != nil && !req.DryRun {
		d, err := req.ReadDurations(req.WhatIf)
		if err != nil {
			return CIAnswer{}, err
		}
		req.Durations = d
	}
	if req.RerunFailed != "" && req.Previous == nil {
		prev, err := usecase.ReadPreviousRun(req.RerunFailed)
		if err != nil {
			return CIAnswer{}, &InputError{Err: err}
		}
		req.Previous = prev
	}
	if req.WhatIf && req.Previous != nil {
		return CIAnswer{}, errors.New("--what-if predicts a run without running it; it does not go with --rerun-failed")
	}
	real := !req.DryRun && !req.WhatIf && req.Shards != nil
	if !real {
		// Nothing runs: no engine, no lock, no clock, no live table.
		req.Shards, req.Leaser, req.Retry, req.Notify, req.Now = nil, nil, nil, nil, nil
	}
	if req.ReadDiff != nil {
		req.ReadDiff = readOnce(req.ReadDiff)
	}
	host, msgs, err := oneHost(req)
	if err != nil {
		return CIAnswer{}, err
	}
	req.Host = host
	var checkout *usecase.Checkout
	if req.OpenCheckout != nil {
		if checkout, err = req.OpenCheckout(); err != nil {
			return CIAnswer{}, err
		}
		msgs = append(msgs, usecase.CheckoutNotice(checkout))
	}
	*said = slices.Clone(msgs)
	tables, tmsgs, err := usecase.LoadTables(req.Repo, "")
	if err != nil {
		return CIAnswer{}, err
	}
	msgs = append(msgs, tmsgs...)
	if err := usecase.CheckStageNames("--only", req.Only, tables); err != nil {
		return CIAnswer{}, err
	}
	if err := usecase.CheckStageNames("--skip", req.Skip, tables); err != nil {
		return CIAnswer{}, err
	}
	if err := checkModels(tables, req); err != nil {
		return CIAnswer{}, err
	}
	ev, err := ciEvent(req)
	if err != nil {
		return CIAnswer{}, err
	}
	wfs, err := usecase.ReadWorkflows(tables)
	if err != nil {
		return CIAnswer{}, err
	}
	g, err := cirun.Build(cirun.Request{Event: ev, Workflows: wfs, Roster: tables.Roster})
	if err != nil {
		return CIAnswer{}, err
	}
	opt := cirun.Options{Host: req.Host, Hosts: req.Hosts, Substitutes: req.Substitutes, StageModel: tables.GPUModel,
		Leaser: req.Leaser, MaxParallel: req.MaxParallel, Only: req.Only, Skip: req.Skip,
		Notify: req.Notify, Now: req.Now, Inline: !real}
	planner := usecase.PlannerMilesCI
	if checkout != nil {
		planner = usecase.PlannerCheckout
	}
	commit := ""
	if real || req.Previous != nil {
		if commit, err = usecase.CommitOf(ctx, req.Git, req.HeadSHA, req.Repo); err != nil {
			return CIAnswer{}, err
		}
	}
	facts := cirun.FactsOf(ev, commit, string(planner))
	facts.RunID = req.RunID
	if real {
		opt.Attempt = 1
	}
	if req.Previous != nil {
		if opt.Previous, opt.Attempt, err = rerunOptions(req.Previous, &facts); err != nil {
			return CIAnswer{}, err
		}
		msgs = append(msgs, rerunMessages(req.Previous)...)
	}
	// The policy job warns about the PR's labels too; x.msgs keeps one of each.
	x := &ciExecutor{req: req, tables: tables, event: ev, checkout: checkout, reg: &registryOnce{}, msgs: usecase.LabelWarnings(tables, ev.Labels, usecase.PRLabelsFrom)}
	msgs = append(msgs, hostNotices(req)...)
	if real || req.WhatIf {
		opt.Estimate = func(u *cirun.Unit) float64 { return x.estimate(ctx, u) }
	}
	if req.WhatIf {
		p, rep := predict(ctx, g, x, opt)
		return CIAnswer{Mode: Predicted, Graph: g, Report: rep, Messages: append(append(msgs, substituteNotices(req.Substitutes, rep)...), x.msgs...), Prediction: p}, nil
	}
	var planned *cirun.Report
	if req.Previous != nil && req.Previous.NothingToRerun() {
		// The record says nothing failed: what the graph, evaluated dry on
		// what the record keeps, runs again says whether it holds.
		dry, dopt := x, opt
		if real {
			dry = x.dry()
			dopt.Leaser, dopt.Notify, dopt.Now, dopt.Estimate, dopt.Inline = nil, nil, nil, nil, true
		}
		rep := cirun.Schedule(ctx, g, dry, dopt)
		again := ranAgain(rep)
		if len(again) == 0 {
			return nothingToRerun(req.Previous, ev), nil
		}
		msgs = append(msgs, recordDoesNotHold(req.Previous, again))
		planned = rep
	}
	if !real {
		rep := planned
		if rep == nil {
			rep = cirun.Schedule(ctx, g, x, opt)
		}
		return CIAnswer{Mode: Planned, Graph: g, Report: rep, Messages: append(append(msgs, substituteNotices(req.Substitutes, rep)...), x.msgs...)}, nil
	}
	return run(ctx, req, g, x, opt, facts, msgs)
}

// run runs the graph on the front end's engine: it readies the results
// folder and the sessions (one host's, or each fleet host's on first use),
// predicts the run first when asked (Predict), leases each shard's devices
// in the host lock, and gives the results.
func run(ctx context.Context, req CIRequest, g *cirun.Graph, x *ciExecutor, opt cirun.Options, facts cirun.RunFacts, msgs []usecase.Message) (CIAnswer, error) {
	ans := CIAnswer{Mode: Ran, Graph: g}
	es, engine := req.Shards.(*EngineShards)
	if engine {
		dir := req.Results
		if dir == "" && req.Previous != nil {
			dir = req.RerunFailed // a re-run completes its own folder
		}
		var err error
		if ans.Dir, err = es.start(ctx, dir, resultsName(req), req.Hosts); err != nil {
			return CIAnswer{}, err
		}
		defer es.close()
	}
	if req.Predict && req.Previous == nil {
		// A recording run keeps what it predicted beside what it measures
		// (history predictions): the what-if of the same graph, planned by
		// miles-ci, before it starts. Its messages are the run's own.
		dry := x.dry()
		dry.checkout = nil
		popt := opt
		popt.Leaser, popt.Notify, popt.Now, popt.Previous, popt.Attempt = nil, nil, nil, nil, 0
		popt.Estimate = func(u *cirun.Unit) float64 { return dry.estimate(ctx, u) }
		ans.Prediction, _ = predict(ctx, g, dry, popt)
	}
	if opt.Leaser != nil && req.Retry == nil {
		retry := time.NewTicker(hostlock.Retry)
		defer retry.Stop()
		req.Retry = retry.C
	}
	opt.Retry = req.Retry
	if opt.Now == nil {
		opt.Now = time.Now
	}
	rep := cirun.Schedule(ctx, g, x, opt)
	ans.Report, ans.Messages = rep, append(append(msgs, substituteNotices(req.Substitutes, rep)...), x.msgs...)
	rep.Run = &facts
	if !engine {
		return ans, nil
	}
	if req.Previous != nil {
		if err := es.keep(req.Previous, rep); err != nil {
			return CIAnswer{}, err
		}
	}
	res, err := es.Results(rep, g)
	if err != nil {
		return CIAnswer{}, err
	}
	ans.Results = &res
	return ans, nil
}

// predict is the what-if of the graph: x plans each unit as a dry run does,
// each taking the time the durations predict on a virtual clock.
func predict(ctx context.Context, g *cirun.Graph, x *ciExecutor, opt cirun.Options) (*whatif.Prediction, *cirun.Report) {
	w := &whatif.Executor{Dry: x, Durations: x.req.Durations}
	opt.Simulate, opt.Inline = true, false
	rep := cirun.Schedule(ctx, g, w, opt)
	p := w.Predict(rep)
	return &p, rep
}

// resultsName names a run's new results folder by its event.
func resultsName(req CIRequest) string {
	switch {
	case req.Event != "":
		return req.Event
	case req.PR != nil:
		return "pull_request-" + strconv.Itoa(req.PR.Number)
	}
	return "ci"
}

// FromFork says whether the event is a pull request from a fork (given, or
// the PR read): such a run is handed no secrets (stagerun.HandedSecrets).
func (r CIRequest) FromFork() bool { return r.Fork || (r.PR != nil && r.PR.Fork) }

// readOnce reads the diff once for the whole run: the policy jobs of the
// PR workflows and the PR image job ask for it at the same time (the
// module's reader exports the file to one path and removes it).
func readOnce(read func() ([]byte, string, error)) func() ([]byte, string, error) {
	var once sync.Once
	var diff []byte
	var unusable string
	var err error
	return func() ([]byte, string, error) {
		once.Do(func() { diff, unusable, err = read() })
		return diff, unusable, err
	}
}

// ciEvent turns the request's trigger facts into the graph's event.
func ciEvent(req CIRequest) (cirun.Event, error) {
	f := usecase.TriggerFacts{Event: req.Event, PRLabelsJSON: req.PRLabelsJSON, PRBody: req.PRBody, PRNumber: req.PRNumber, Fork: req.Fork, Action: req.Action}.FromPR(req.PR, req.Given)
	req.PRLabelsJSON = f.PRLabelsJSON
	ev := cirun.Event{Name: f.Event, Action: f.Action, Schedule: req.Schedule, PRBody: f.PRBody, PRNumber: f.PRNumber, Fork: f.Fork,
		Inputs: map[string]string{}}
	for k, v := range map[string]string{"ci_image_tag": req.ImageTag, "ci_sglang_pr": req.SGLangInput, "ci_megatron_pr": req.MegatronInput} {
		if v != "" {
			ev.Inputs[k] = v
		}
	}
	switch ev.Name {
	case cirun.EventPullRequest:
		if req.PRLabelsJSON != "" {
			labels, err := prLabels(req.PRLabelsJSON)
			if err != nil {
				return cirun.Event{}, err
			}
			ev.Labels = labels
		}
	case cirun.EventSchedule:
		if req.Schedule == "" {
			return cirun.Event{}, errors.New("a schedule event needs its cron; give --schedule, e.g. '0 15 * * 0-5'")
		}
	case cirun.EventDispatch:
	case cirun.EventRelease:
		if req.Release == nil {
			return cirun.Event{}, errors.New("a release run needs the release branch's lockfile; give --release-lock release-lock.json")
		}
		ev.ReleaseOutputs = map[string]string{"branch_name": req.Release.ReleaseBranch, "ci_image_tag": req.Release.CIImageTag}
		ev.Inputs["branch_name"] = req.Release.ReleaseBranch
	case "":
		return cirun.Event{}, errors.New("give the event: --event pull_request|schedule|workflow_dispatch|release, or --pr N")
	default:
		if err := usecase.CheckEvent("--event", ev.Name, usecase.CIEvents); err != nil {
			return cirun.Event{}, err
		}
		return cirun.Event{}, fmt.Errorf("unsupported event %q; use pull_request, schedule, workflow_dispatch or release", ev.Name)
	}
	if req.Release != nil && ev.Name != cirun.EventRelease {
		return cirun.Event{}, errors.New("--release-lock goes with --event release")
	}
	return ev, nil
}

// prLabels reads a PR's label names, as the policy's label filter reads them.
func prLabels(js string) ([]string, error) {
	var labels []string
	if err := jsonUnmarshalStrings(js, &labels); err != nil {
		return nil, fmt.Errorf("--pr-labels-json: %w; give a JSON array of label names, e.g. '[\"run-ci-megatron\"]'", err)
	}
	return labels, nil
}

// ciExecutor runs the graph's units: the resolvers as use cases, the PR
// image and the stage shards through the ShardRunner (planned only in a
// dry run).
type ciExecutor struct {
	req    CIRequest
	tables *policy.Tables
	event  cirun.Event
	// checkout plans and answers the policy with the checkout's own code
	// (--planner checkout), nil for miles-ci's.
	checkout *usecase.Checkout

	// reg is the checkout's test registry, read once.
	reg *registryOnce
	// mu guards the messages and the stages, each planned once.
	mu     sync.Mutex
	msgs   []usecase.Message
	stages map[stageKey]*plannedStage
}

func (x *ciExecutor) Run(ctx context.Context, u *cirun.Unit) cirun.Outcome {
	switch u.Node.Kind {
	case cirun.KindPolicy:
		return x.policy(ctx, u)
	case cirun.KindImage:
		return x.image(u)
	case cirun.KindDeps:
		return x.deps()
	case cirun.KindPRImage:
		return x.prImage(ctx)
	case cirun.KindStage:
		return x.shard(ctx, u)
	case cirun.KindPoolPlan:
		return x.poolPlan(u)
	case cirun.KindPoolRun:
		return x.poolFile(ctx, u)
	}
	return cirun.Outcome{Result: cirun.ResultFailure, CannotRun: true, Reason: "miles-ci does not run this job"}
}

// tell keeps a message for the answer, once: the units that say it run at
// the same time (the policy jobs of both PR workflows).
func (x *ciExecutor) tell(m usecase.Message) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !slices.Contains(x.msgs, m) {
		x.msgs = append(x.msgs, m)
	}
}

func failed(err error) cirun.Outcome {
	return cirun.Outcome{Result: cirun.ResultFailure, Reason: err.Error(), ExitCode: 1}
}

// policy is resolve-ci-policy: the use case Policy (or the checkout's own
// ci_policy), with a called workflow's cadence input as CADENCE_OVERRIDE.
func (x *ciExecutor) policy(ctx context.Context, u *cirun.Unit) cirun.Outcome {
	ev := x.event
	name := ev.Name
	if name == cirun.EventRelease {
		name = cirun.EventDispatch // a called workflow sees its caller's event
	}
	trig := policy.Trigger{Event: name, Schedule: ev.Schedule, CadenceOverride: u.Input("cadence")}
	if name == cirun.EventPullRequest {
		trig.PRLabelsJSON = labelsJSON(ev.Labels)
	}
	preq := usecase.PolicyRequest{Repo: x.req.Repo, Tables: x.tables, Trigger: trig, ReadDiff: x.req.ReadDiff, Registry: x.registry,
		Given: usecase.Given{Event: true, PRLabels: true, Diff: x.req.Given.Diff}}
	if name == cirun.EventPullRequest {
		preq.PR = x.req.PR
	}
	out := map[string]string{}
	reason := func() string {
		var kv []string
		for _, k := range []string{"cadence", "raw_labels", "bypass_fastfail", "skipped_stages", "needs_cuda_image"} {
			if v, ok := out[k]; ok {
				kv = append(kv, k+"="+v)
			}
		}
		return strings.Join(kv, " ")
	}
	if x.checkout != nil {
		cp, err := usecase.PolicyOfCheckout(ctx, x.checkout, preq)
		if err != nil {
			return failed(err)
		}
		for _, kv := range cp.Lines {
			out[kv.Key] = kv.Value
		}
		return cirun.Outcome{Result: cirun.ResultSuccess, Outputs: out, Reason: reason(), Detail: cp.Outputs}
	}
	ans, err := usecase.Policy(preq)
	if err != nil {
		return failed(err)
	}
	for _, m := range ans.Messages {
		x.tell(m)
	}
	for _, kv := range ans.Outputs.StepOutputs() {
		out[kv.Key] = kv.Value
	}
	return cirun.Outcome{Result: cirun.ResultSuccess, Outputs: out, Reason: reason(), Detail: ans.Outputs}
}

func labelsJSON(labels []string) string {
	if labels == nil {
		labels = []string{}
	}
	q := make([]string, len(labels))
	for i, l := range labels {
		q[i] = strconv.Quote(l)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// workflowBackend is the backend whose image a PR workflow's image job
// resolves: the one whose profile names the workflow and an image family.
func workflowBackend(file string) policy.Backend {
	for _, b := range policy.Backends() {
		if p := policy.ProfileOf(b); p.PRWorkflow == file && p.StageImage == "" {
			return b
		}
	}
	return policy.CUDA
}

// image is resolve-ci-image (rules §6): a called workflow's image_tag, the
// dispatch input, this PR's own image when its build job made one, the PR
// body's ci-image-tag, then the default.
func (x *ciExecutor) image(u *cirun.Unit) cirun.Outcome {
	ev := x.event
	in := deps.ImageInputs{Backend: workflowBackend(u.Node.Run.File), CalledTag: u.Input("image_tag"), InputTag: ev.Inputs["ci_image_tag"]}
	if in.Backend == policy.CUDA || in.Backend == policy.CPU {
		in.PRBody = ev.PRBody
		for _, n := range u.Needs {
			if n.Outputs["built"] == "true" || n.Outputs["tag_available"] == "true" {
				in.PRImageAvailable, in.PRNumber = true, strconv.Itoa(ev.PRNumber)
			}
		}
	}
	img, err := deps.ResolveImage(in)
	if err != nil {
		return failed(err)
	}
	return cirun.Outcome{Result: cirun.ResultSuccess, Outputs: map[string]string{"container_image": img.Image}, Reason: "image " + img.Image + " (" + string(img.Source) + ")", Detail: img, Image: &img}
}

// deps is resolve-ci-deps: the ROCm image keeps its baked dependencies
// unless a dispatch input or a PR-body directive names one (rules §7).
func (x *ciExecutor) deps() cirun.Outcome {
	ev := x.event
	d, err := deps.Resolve(deps.Inputs{Backend: policy.ROCM, PRBody: ev.PRBody, SGLangInput: ev.Inputs["ci_sglang_pr"], MegatronInput: ev.Inputs["ci_megatron_pr"]})
	if err != nil {
		return failed(err)
	}
	skip := strconv.FormatBool(!d.Install)
	return cirun.Outcome{Result: cirun.ResultSuccess, Outputs: map[string]string{"skip_dependency_install": skip}, Reason: "skip_dependency_install=" + skip, Detail: d}
}

// prImage is the PR image job (rules §12.3): a same-repository pull request
// whose image build inputs changed builds radixark/miles:pr-N from the
// checkout's Dockerfile; anything else keeps the released image.
func (x *ciExecutor) prImage(ctx context.Context) cirun.Outcome {
	ev := x.event
	var changed []string
	if ev.Name == cirun.EventPullRequest {
		paths, why := x.changedPaths()
		if why != "" {
			x.tell(usecase.Warning("PR image: " + why + "; treating the image build inputs as unchanged"))
		}
		changed = paths
	}
	in, err := usecase.ImageBuildInputs(x.req.Repo)
	if err != nil {
		return failed(err)
	}
	d := deps.DecidePRImage(ev.Name == cirun.EventPullRequest, ev.Fork, ev.PRNumber, changed, in)
	out := map[string]string{"built": strconv.FormatBool(d.Build), "tag_available": strconv.FormatBool(d.Build)}
	if !d.Build || x.req.Shards == nil {
		return cirun.Outcome{Result: cirun.ResultSuccess, Outputs: out, Reason: d.Reason, Detail: d, DryRun: x.req.Shards == nil && d.Build}
	}
	img, err := x.req.Shards.BuildImage(ctx, d.Tag)
	if err != nil {
		return cirun.Outcome{Result: cirun.ResultFailure, Reason: "building " + d.Tag + ": " + err.Error(), ExitCode: 1}
	}
	return cirun.Outcome{Result: cirun.ResultSuccess, Outputs: out, Reason: "built " + img, Detail: d}
}

// changedPaths are the PR's changed paths (both of a rename), or why there
// are none.
func (x *ciExecutor) changedPaths() ([]string, string) {
	var diff []byte
	why := ""
	switch {
	case x.req.PR != nil && !x.req.Given.Diff:
		diff, why = x.req.PR.NameStatus()
	case x.req.ReadDiff != nil:
		var err error
		if diff, why, err = x.req.ReadDiff(); err != nil {
			return nil, err.Error()
		}
	default:
		return nil, "no changed files given (--changed-files or --pr)"
	}
	if why != "" {
		return nil, why
	}
	paths, err := usecase.ChangedPaths(diff)
	if err != nil {
		return nil, err.Error()
	}
	return paths, ""
}

// registry loads the checkout's test registry once.
func (x *ciExecutor) registry() (*policy.Registry, error) {
	x.reg.once.Do(func() { x.reg.reg, x.reg.err = x.tables.LoadRegistry(x.req.Repo) })
	return x.reg.reg, x.reg.err
}

// dry is the executor of a dry evaluation of the same run (its own
// prediction, the check of a re-run's record): it plans and runs nothing,
// on the run's tables and registry.
func (x *ciExecutor) dry() *ciExecutor {
	d := &ciExecutor{req: x.req, tables: x.tables, event: x.event, checkout: x.checkout, reg: x.reg}
	d.req.Shards = nil
	return d
}

// registryOnce is the checkout's test registry, read once for the run (a
// run's own prediction shares it).
type registryOnce struct {
	once sync.Once
	reg  *policy.Registry
	err  error
}

// lookup is the registry as the stage-run path looks it up: the run's
// checkout's, read once.
func (x *ciExecutor) lookup(string) (*policy.Registry, error) { return x.registry() }

// shard plans (and in a real run runs) one stage shard: its run_suite.py
// arguments (the graph read them from its job's command) name the stage,
// cadence and labels; the stage is planned once for all its shards
// (x.stage), and the shard's request goes to the runner as it is.
func (x *ciExecutor) shard(ctx context.Context, u *cirun.Unit) cirun.Outcome {
	cannot := func(reason string) cirun.Outcome {
		return cirun.Outcome{Result: cirun.ResultFailure, CannotRun: true, Reason: reason}
	}
	args := u.Work.Suite
	if args == nil {
		return cannot(fmt.Sprintf("job %s: the graph gave no run_suite.py arguments", u.Node.ID))
	}
	id := u.Shard
	ps := x.stage(ctx, u, *args)
	if ps.err != nil {
		return cannot(ps.err.Error())
	}
	if id >= len(ps.plans) {
		return cannot(fmt.Sprintf("job %s runs shard %d of stage %s, which the checkout's tables plan in %d shard(s)", u.Node.ID, id, args.Suite, len(ps.plans)))
	}
	if x.req.Shards == nil {
		return cirun.Outcome{Result: cirun.ResultSuccess, DryRun: true, Detail: ShardPlan{Command: u.Command, Plan: ps.plans[id]}}
	}
	return x.req.Shards.RunShard(ctx, onPlacement(ps.reqs[id], u), u)
}

// plannedStage is a stage of the run planned once: each shard's plan (in a
// dry run with --planner checkout, the checkout's own) and, for a real run,
// each shard's request.
type plannedStage struct {
	once  sync.Once
	plans []*policy.Plan
	reqs  []stagerun.Request
	err   error
}

// stageKey names one planning of a stage: shards of one stage job share it.
type stageKey struct {
	suite, cadence, labels string
	image                  deps.Image
	matchAll               bool
}

// stage plans the stage of a shard unit once, on the tables and registry the
// run read once: every shard's request, as the stage run path builds it.
func (x *ciExecutor) stage(ctx context.Context, u *cirun.Unit, args cirun.RunSuiteArgs) *plannedStage {
	key := stageKey{suite: args.Suite, cadence: args.Cadence, labels: strings.Join(args.Labels, "\x00"), matchAll: args.MatchAllLabels}
	if u.Work.Image != nil {
		key.image = *u.Work.Image
	}
	x.mu.Lock()
	if x.stages == nil {
		x.stages = map[stageKey]*plannedStage{}
	}
	ps := x.stages[key]
	if ps == nil {
		ps = &plannedStage{}
		x.stages[key] = ps
	}
	x.mu.Unlock()
	ps.once.Do(func() { ps.plan(ctx, x, u, args) })
	return ps
}

func (ps *plannedStage) plan(ctx context.Context, x *ciExecutor, u *cirun.Unit, args cirun.RunSuiteArgs) {
	size := 1
	if args.Partition != nil {
		size = args.Partition.Size
	}
	dry := x.req.Shards == nil
	if dry && x.checkout != nil {
		// The dry run shows the checkout's own plans, and needs no other.
		preqs := make([]policy.PlanRequest, size)
		for i := range preqs {
			preqs[i] = args.PlanRequest()
			if args.Partition != nil {
				preqs[i].Partition = &policy.Partition{ID: i, Size: size}
			}
		}
		cps, err := x.checkout.Plans(ctx, preqs)
		if err != nil {
			ps.err = err
			return
		}
		for _, cp := range cps {
			ps.plans = append(ps.plans, cp.Plan)
		}
		return
	}
	if _, err := x.registry(); dry {
		if ahead := (*policy.AheadError)(nil); errors.As(err, &ahead) {
			ps.err = errors.New(err.Error() + " (give --planner checkout)")
			return
		}
	}
	_, ps.reqs, ps.err = usecase.PlanStageOf(x.stageInputs(u, args), x.tables, x.lookup, func(st policy.Stage, shards int) ([]int, error) {
		if size != max(shards, 1) {
			return nil, fmt.Errorf("job %s runs stage %s in %d shard(s), but the checkout's tables plan it in %d", u.Node.ID, st.Name, size, shards)
		}
		ids := make([]int, size)
		for i := range ids {
			ids[i] = i
		}
		return ids, nil
	})
	for _, r := range ps.reqs {
		ps.plans = append(ps.plans, r.Plan)
	}
}

// PoolPlanned is what the B200 pool's planner job decided: its batches.
type PoolPlanned struct {
	Plan policy.PoolPlan
}

// Lines are the plan as plan --pool prints it.
func (p PoolPlanned) Lines() []string {
	return strings.Split(strings.TrimSuffix(p.Plan.Text(), "\n"), "\n")
}

// poolPlan is the pool's planner job (b200_plan.py, rules §11.8): its
// command line, evaluated from the workflow, planned by policy.PlanPool; the
// outputs are the matrix and has_tests it writes to $GITHUB_OUTPUT.
func (x *ciExecutor) poolPlan(u *cirun.Unit) cirun.Outcome {
	preq := u.Work.PoolPlan
	if preq == nil {
		return cirun.Outcome{Result: cirun.ResultFailure, CannotRun: true, Reason: fmt.Sprintf("job %s: the graph gave no planner request", u.Node.ID)}
	}
	reg, err := x.registry()
	if err != nil {
		return cirun.Outcome{Result: cirun.ResultFailure, CannotRun: true, Reason: err.Error()}
	}
	usecase.CountPlanning() // the pool's stage, planned once: its file units build on this plan
	plan, err := policy.PlanPool(reg, *preq)
	if err != nil {
		return failed(err)
	}
	out := map[string]string{"matrix": plan.Matrix(), "has_tests": strconv.FormatBool(plan.HasTests())}
	reason := fmt.Sprintf("suites [%s], cadence %s: %d file(s) in %d batch(es); has_tests=%s", strings.Join(plan.Suites, " "), plan.Cadence, len(plan.Jobs), len(plan.Batches), out["has_tests"])
	return cirun.Outcome{Result: cirun.ResultSuccess, Outputs: out, Reason: reason, Detail: PoolPlanned{Plan: plan}}
}

// PoolFile is what a dry run's pool unit would run: one file's
// run_suite.py --test-file command.
type PoolFile struct {
	Command string `json:"command"`
	File    string `json:"file"`
	// est is the file's est_time (0: not registered), for a what-if.
	est float64
}

// PlannedTests are the one file, at its est_time (whatif.Planned).
func (p PoolFile) PlannedTests() []policy.PlannedTest {
	return []policy.PlannedTest{{File: p.File, EstTime: p.est}}
}

// RunCommand is the file's run_suite.py command.
func (p PoolFile) RunCommand() string { return p.Command }

// TestFiles is the one file.
func (p PoolFile) TestFiles() []string { return []string{p.File} }

// Lines are the command and the file, for the graph's text.
func (p PoolFile) Lines() []string { return []string{"$ " + p.Command, p.File} }

// poolFile plans (and in a real run runs) one file of a pool batch, as
// run --stage stage-c-b200 --batch N runs each of its files.
func (x *ciExecutor) poolFile(ctx context.Context, u *cirun.Unit) cirun.Outcome {
	args, job := u.Work.Suite, u.Work.PoolFile
	if args == nil || job == nil {
		return cirun.Outcome{Result: cirun.ResultFailure, CannotRun: true, Reason: fmt.Sprintf("job %s: the graph gave no pool file to run", u.Node.ID)}
	}
	if x.req.Shards == nil {
		return cirun.Outcome{Result: cirun.ResultSuccess, DryRun: true, Detail: PoolFile{Command: u.Command, File: job.File, est: x.estTime(u)}}
	}
	req, err := usecase.PoolFileRequest(x.stageInputs(u, *args), x.tables, x.lookup, *job)
	if err != nil {
		return cirun.Outcome{Result: cirun.ResultFailure, CannotRun: true, Reason: err.Error()}
	}
	return x.req.Shards.RunShard(ctx, onPlacement(req, u), u)
}

// stageInputs are a stage's stage-run inputs: its command's cadence and
// labels and the image the image job resolved.
func (x *ciExecutor) stageInputs(u *cirun.Unit, args cirun.RunSuiteArgs) usecase.Inputs {
	ev := x.event
	in := usecase.Inputs{Repo: x.req.Repo, Stage: args.Suite, Cadence: args.Cadence, Labels: args.Labels, MatchAllLabels: args.MatchAllLabels,
		PRBody: ev.PRBody, Fork: ev.Fork, SGLangInput: ev.Inputs["ci_sglang_pr"], MegatronInput: ev.Inputs["ci_megatron_pr"],
		Release: x.req.Release}
	if ev.PRNumber > 0 {
		in.PRNumber = strconv.Itoa(ev.PRNumber)
	}
	if u.Work.Image != nil && x.req.Release == nil {
		img := *u.Work.Image
		in.Image = &img
	}
	if x.req.Release != nil {
		in.Cadence = ""
		in.Labels = nil
	}
	return in
}

// onPlacement puts a shard's request on the devices its unit was placed
// on, as they are (typed, never parsed again): every GPU of the host for
// the engine, the unit's own as the visible-devices variable, as Miles'
// runners split a host; on a stand-in host the engine gives none.
func onPlacement(req stagerun.Request, u *cirun.Unit) stagerun.Request {
	req.GPUs = stagerun.GPUs{None: u.Placement.StandIn}
	req.VisibleDevices = nil
	if u.GPUs > 0 && len(u.Placement.Devices) > 0 {
		req.VisibleDevices = u.Placement.Devices
	}
	return req
}

// hostNotices say, once, what the hosts leave unchecked: devices given as
// bare ids carry no kind, so any shard may run on any of them.
func hostNotices(req CIRequest) []usecase.Message {
	hosts := req.Hosts
	if len(hosts) == 0 {
		hosts = []cirun.Host{req.Host}
	}
	var bare []string
	for _, h := range hosts {
		if len(h.Devices) > 0 && !h.Kinded() {
			name := "--gpus " + h.String()
			if h.Name != "" {
				name = "host " + h.Name + " (" + h.String() + ")"
			}
			bare = append(bare, name)
		}
	}
	if len(bare) == 0 {
		return nil
	}
	return []usecase.Message{usecase.Notice(strings.Join(bare, ", ") + " gives no GPU model, so GPU kinds are not checked: a shard of any stage may run on these devices; give the model to check them (--gpus h200:0-7)")}
}

func jsonUnmarshalStrings(js string, out *[]string) error {
	return json.Unmarshal([]byte(js), out)
}

// RunCommand is the shard's run_suite.py command.
func (p ShardPlan) RunCommand() string { return p.Command }

// TestFiles are the shard's enabled tests, in shard order.
func (p ShardPlan) TestFiles() []string {
	if p.Plan == nil {
		return nil
	}
	out := []string{}
	for _, t := range p.Plan.Enabled {
		out = append(out, t.File)
	}
	return out
}

// PlannedTests are the shard's enabled tests with their est_time
// (whatif.Planned).
func (p ShardPlan) PlannedTests() []policy.PlannedTest {
	if p.Plan == nil {
		return nil
	}
	return p.Plan.Enabled
}

// Lines are the command and the tests, for the graph's text.
func (p ShardPlan) Lines() []string {
	lines := []string{"$ " + p.Command}
	if p.Plan != nil && len(p.Plan.Enabled) == 0 {
		lines = append(lines, "(no enabled test: the shard passes at once)")
	}
	return append(lines, p.TestFiles()...)
}

// oneHost is the one host a run schedules on when no fleet is given: the
// host --gpus named, or with --gpus all the GPUs this machine shows. A dry
// run (or a what-if) without --gpus on a machine that shows none plans the
// GPU shards for stand-ins, as --gpus none, and says so: a plan needs no
// device, and a laptop should see the graph. A real run there still needs
// --gpus none, so no GPU stage runs on a stand-in unasked.
func oneHost(req CIRequest) (cirun.Host, []usecase.Message, error) {
	if len(req.Hosts) > 0 || !req.AllGPUs {
		return req.Host, nil, nil
	}
	detect := req.Detect
	if detect == nil {
		detect = func() ([]hostgpu.Device, error) {
			return nil, errors.New("this front end cannot read the machine's GPUs")
		}
	}
	found, err := detect()
	if !req.GPUsGiven && req.Shards == nil && (err != nil || len(found) == 0) {
		why := "this host shows no GPU"
		if err != nil {
			why = "this host's GPUs cannot be counted (" + err.Error() + ")"
		}
		return cirun.Host{StandIn: true}, []usecase.Message{usecase.Notice("no --gpus, and " + why + ": the dry run plans every GPU shard for stand-ins, as --gpus none; give --gpus h200:0-7 (or 0-7) to plan for a GPU host")}, nil
	}
	h, err := cirun.DetectedHost(found, err)
	if err != nil {
		return cirun.Host{}, nil, &UsageError{Err: err}
	}
	return h, nil, nil
}

// UsageError is a flag's value the use case could not take once it looked
// at it (--gpus all on a machine that shows no GPU): the command names it
// with its usage, as it does a flag it cannot read.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// estimate is a unit's expected seconds (cirun.Options.Estimate): its
// files' times from the history, else their est_time, and its stage's
// set-up (whatif.Durations); 0 for a resolver, or a shard that cannot be
// planned (its run says why).
func (x *ciExecutor) estimate(ctx context.Context, u *cirun.Unit) float64 {
	if u.Stage == nil {
		return 0
	}
	var tests []policy.PlannedTest
	switch u.Node.Kind {
	case cirun.KindStage:
		if u.Work.Suite == nil {
			return 0
		}
		ps := x.stage(ctx, u, *u.Work.Suite)
		if ps.err != nil || u.Shard >= len(ps.plans) || ps.plans[u.Shard] == nil {
			return 0
		}
		tests = ps.plans[u.Shard].Enabled
	case cirun.KindPoolRun:
		if u.Work.PoolFile == nil {
			return 0
		}
		tests = []policy.PlannedTest{{File: u.Work.PoolFile.File, EstTime: x.estTime(u)}}
	default:
		return 0
	}
	return x.req.Durations.Shard(u.Stage.Name, u.Stage.Backend, tests).Seconds
}

// estTime is a pool file's registered est_time in its suite (0 when the
// registry has none).
func (x *ciExecutor) estTime(u *cirun.Unit) float64 {
	reg, err := x.registry()
	if err != nil || u.Work.PoolFile == nil {
		return 0
	}
	for _, r := range reg.Registrations {
		if r.File == u.Work.PoolFile.File && r.Suite == u.Work.PoolFile.Suite {
			return r.EstTime
		}
	}
	return 0
}
