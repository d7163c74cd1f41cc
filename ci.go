package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/hostgpu"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/resultsdir"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/usecase/ci"
)

// Ci is the whole CI of one event, as the checkout's PR workflows run it.
// Rules §12: plan lists every job and shard, run runs them on this
// engine. The trigger facts are policy's; with-pr or with-pull-request give
// a pull request's, release ... ci a release run's.
func (m *MilesCi) Ci(
	// GitHub event: pull_request, schedule or workflow_dispatch (default:
	// pull_request with with-pr).
	// +optional
	event Event,
	// Cron expression of a scheduled run.
	// +optional
	schedule string,
	// The PR's label names, e.g. run-ci-megatron.
	// +optional
	prLabels []string,
	// The pull_request activity type (default synchronize; closed runs nothing).
	// +optional
	action string,
	// Output of `git diff --name-status -z -M HEAD^1 HEAD` for a pull request.
	// +optional
	changedFiles *dagger.File,
	// Only these stages or backends (cpu, cuda, rocm).
	// +optional
	only []string,
	// Leave out these stages or backends.
	// +optional
	skip []string,
	// At most this many shards at once (default: as many as fit).
	// +optional
	maxParallel int,
	// Who plans: miles-ci (the default) or checkout (the checkout's own tests/ci code).
	// +optional
	planner Planner,
	// Run the stages of one GPU model on devices of another, FROM=TO such as h100=h200 (the constructor's --gpus gives the devices' models, h200:0-7).
	// +optional
	substitute []string,
) (*Graph, error) {
	labels := ""
	if prLabels != nil {
		js, err := jsonString(prLabels)
		if err != nil {
			return nil, err
		}
		labels = js
	}
	return &Graph{Ci: m, Event: string(event), Schedule: schedule, PrLabelsJson: labels, Action: action, ChangedFiles: changedFiles,
		Only: only, Skip: skip, MaxParallel: maxParallel, Planner: planner, Substitute: substitute}, nil
}

// Ci is the whole CI of the release run, on the lockfile's image and refs.
// It is release-branch-cut.yml's calls of the PR workflows at cadence
// release.
func (r *Release) Ci(
	// Only these stages or backends (cpu, cuda, rocm).
	// +optional
	only []string,
	// Leave out these stages or backends.
	// +optional
	skip []string,
	// At most this many shards at once (default: as many as fit).
	// +optional
	maxParallel int,
	// Who plans: miles-ci (the default) or checkout (the checkout's own tests/ci code).
	// +optional
	planner Planner,
	// Run the stages of one GPU model on devices of another, FROM=TO such as h100=h200 (the constructor's --gpus gives the devices' models, h200:0-7).
	// +optional
	substitute []string,
) (*Graph, error) {
	g, err := r.Miles.Ci("", "", nil, "", nil, only, skip, maxParallel, planner, substitute)
	if err != nil {
		return nil, err
	}
	g.Event, g.ReleaseLock = cirun.EventRelease, r.Lock
	return g, nil
}

// Graph is the whole CI of one event, read from the checkout's workflows.
// It holds the event's jobs, needs, gates and shard matrices.
type Graph struct {
	// +private
	Ci *MilesCi
	// +private
	Event string
	// +private
	Schedule string
	// +private
	PrLabelsJson string
	// +private
	Action string
	// +private
	ChangedFiles *dagger.File
	// +private
	Only []string
	// +private
	Skip []string
	// +private
	MaxParallel int
	// +private
	Planner Planner
	// +private
	ReleaseLock string
	// +private
	Substitute []string
}

// request is the graph's use-case request, its checkout exported to dir.
func (g *Graph) request(ctx context.Context, dir string) (ci.CIRequest, error) {
	m := g.Ci
	req := ci.CIRequest{Repo: dir, HeadSHA: m.HeadSha, Git: sourceDigest{m.Source}, Event: g.Event, Action: g.Action, Schedule: g.Schedule, PRLabelsJSON: g.PrLabelsJson, Fork: m.Fork,
		ImageTag: m.ImageTag, SGLangInput: m.SglangPr, MegatronInput: m.MegatronPr, MaxParallel: g.MaxParallel, Only: g.Only, Skip: g.Skip,
		Given: usecase.Given{Event: g.Event != "", PRLabels: g.PrLabelsJson != "", Body: m.PrBodyFile != nil, Number: m.PrNumber != 0, Diff: g.ChangedFiles != nil,
			PR: m.Pr != 0, Schedule: g.Schedule != "", Release: g.ReleaseLock != ""}, PRNumber: m.PrNumber}
	// Refused before the lockfile or the pull request is read.
	if err := req.Validate(); err != nil {
		return req, err
	}
	var err error
	if req.Host, err = cirun.ParseHost(m.Gpus, func() ([]hostgpu.Device, error) {
		return nil, errors.New("the module cannot read the host's GPUs")
	}); err != nil {
		return ci.CIRequest{}, fmt.Errorf("%w (the constructor's --gpus)", err)
	}
	if req.Substitutes, err = usecase.ParseSubstitutes(g.Substitute); err != nil {
		return ci.CIRequest{}, err
	}
	if g.ReleaseLock != "" {
		lock, err := usecase.ParseReleaseLock(deps.LockFileName, g.ReleaseLock)
		if err != nil {
			return req, err
		}
		req.Release = lock
	}
	if req.PR, err = m.pullRequestOf(ctx, g.ChangedFiles == nil); err != nil {
		return req, err
	}
	if m.PrBodyFile != nil {
		if req.PRBody, err = readFile(ctx, m.PrBodyFile, fsinput.PRBody, "with-pull-request --body-file"); err != nil {
			return req, err
		}
	}
	if g.ChangedFiles != nil {
		req.ReadDiff = func() ([]byte, string, error) { return readChangedFiles(ctx, g.ChangedFiles, dir+".changed-files") }
	}
	if plannerOf(g.Planner) == usecase.PlannerCheckout {
		req.OpenCheckout = func() (*usecase.Checkout, error) { return checkout(dir, m.Source) }
	}
	return req, nil
}

// Plan returns the graph with no engine run (`miles-ci ci --dry-run`).
// Every job and shard comes with its state, the reason it is skipped, its
// GPUs, needs and tests; its json is the same bytes as `miles-ci ci
// --dry-run --json`, its text the command's table and mermaid a flowchart.
// The answer is kept for one session: with-pr reads the pull request anew in each.
// +cache="session"
func (g *Graph) Plan(ctx context.Context) (*CiPlan, error) {
	return withCheckout(ctx, g.Ci.Source, func(dir string) (*CiPlan, error) {
		ans, err := g.ci(ctx, dir, func(req *ci.CIRequest) { req.DryRun = true })
		if err != nil {
			return nil, err
		}
		js, err := jsonString(ans.Report)
		if err != nil {
			return nil, err
		}
		return answerWith[CiPlan](ans.Report, js, ans.Messages,
			map[string]any{"Text": ans.Report.Text(), "Mermaid": ans.Report.Mermaid(ans.Graph)})
	})
}

// Run runs every job of the graph on this engine, as `miles-ci ci` does.
// The resolvers run as miles-ci's use cases, each shard through the
// stage-run path, concurrently while the constructor's --gpus fit. A failing
// shard is a result (see assert), not an error.
// +cache="never"
func (g *Graph) Run(
	ctx context.Context,
	// Run id: calls with the same id share one run through the engine's
	// cache; without one every call runs anew.
	// +optional
	runId string,
	// The results folder of an earlier run of the same checkout, event,
	// trigger facts and planner: re-run only what failed, was cancelled or
	// could not run (and the jobs whose if: now holds), keep the rest.
	// +optional
	rerunFailed *dagger.Directory,
) (*GraphRun, error) {
	return withCheckout(ctx, g.Ci.Source, func(dir string) (*GraphRun, error) {
		if rerunFailed != nil {
			prevDir := dir + ".previous"
			defer os.RemoveAll(prevDir)
			if _, err := rerunFailed.Export(ctx, prevDir); err != nil {
				return nil, fmt.Errorf("export --rerun-failed: %w", err)
			}
			return g.run(ctx, dir, runId, prevDir, rerunFailed)
		}
		return g.run(ctx, dir, runId, "", nil)
	})
}

// run is Run on the checkout exported to dir, re-running the earlier run
// exported to prevDir (rerunFailed) when given.
func (g *Graph) run(ctx context.Context, dir, runID, prevDir string, rerunFailed *dagger.Directory) (*GraphRun, error) {
	mr := &moduleRun{m: g.Ci, ctx: ctx}
	defer mr.close()
	ans, err := g.ci(ctx, dir, func(req *ci.CIRequest) {
		mr.fork = req.FromFork()
		// The metric gate judges each CUDA shard's records with the
		// checkout's declarations, without a store (the module links none).
		judge := usecase.GateJudge{Source: usecase.CheckoutSource(dir)}
		mr.runner = &ci.EngineShards{Nonce: nonce(runID), Run: judge.PrepareAndTest, Ready: mr.ready, Connect: mr.connect}
		req.Shards, req.RunID, req.Notify, req.RerunFailed = mr.runner, mr.runner.Nonce, mr.notify, prevDir
	})
	if err != nil {
		return nil, errors.New(mr.mask(err.Error()))
	}
	if ans.Mode == ci.Kept {
		return graphRun(ans.Report, ans.Report.Text(), rerunFailed, ans.Messages, nil), nil
	}
	res := ans.Results
	results := dag.Directory().WithNewFile(resultsdir.Marker, resultsdir.MarkerText)
	for _, f := range res.Files {
		results = results.WithNewFile(f.Name, f.Data)
	}
	// Each failed shard's first failing file, its last lines and its
	// run.log, by its path inside results, as the command's table ends.
	text := ans.Report.Text()
	if res.Reuse != "" {
		text += res.Reuse + "\n"
	}
	text += usecase.FailuresText("", res.Failures)
	return graphRun(ans.Report, text, results, ans.Messages, mr.mask), nil
}

// ci is the one call of the ci use case: the graph's request on the
// checkout exported to dir, as complete makes it a plan or a run.
func (g *Graph) ci(ctx context.Context, dir string, complete func(*ci.CIRequest)) (ci.CIAnswer, error) {
	req, err := g.request(ctx, dir)
	if err != nil {
		return ci.CIAnswer{}, err
	}
	complete(&req)
	return ci.CI(ctx, req)
}

// moduleRun is the module's side of a run that runs shards: the engine
// session the use case asks for (ready) only then, with the masker of the
// secrets it hands the shards.
type moduleRun struct {
	m      *MilesCi
	ctx    context.Context
	fork   bool
	runner *ci.EngineShards
	s      *session
	masker *report.Masker
	start  time.Time
}

// ready opens the session and reads its secrets' masker; the module writes
// no results folder (its answer holds the results).
func (r *moduleRun) ready(string, string) (string, error) {
	s, err := r.m.newSession(r.ctx, r.fork)
	if err != nil {
		return "", err
	}
	r.s = s
	if r.masker, err = s.masker(r.ctx); err != nil {
		return "", err
	}
	r.runner.Masker, r.start = r.masker, time.Now()
	return "", nil
}

// connect gives the one session: the module runs on its own engine.
func (r *moduleRun) connect(context.Context, cirun.Host) (ci.Session, error) {
	return moduleSession{r.s}, nil
}

// notify says each job's state change on stderr, masked.
func (r *moduleRun) notify(j cirun.JobReport) { progress(r.mask(j.Line(time.Since(r.start)))) }

// mask masks the session's secret values (none before the session).
func (r *moduleRun) mask(text string) string {
	if r.masker == nil {
		return text
	}
	return r.masker.Mask(text)
}

func (r *moduleRun) close() {
	if r.s != nil {
		r.s.close()
	}
}

// moduleSession is the run's session as the use case holds it: closed by
// the run (moduleRun.close), after the results are built.
type moduleSession struct{ s *session }

func (m moduleSession) Container() stagerun.Container { return m.s.container() }
func (moduleSession) Close() error                    { return nil }

// Check says the session's engine answers: it is the one the module runs on.
func (moduleSession) Check(context.Context) error { return nil }

// graphRun is a finished run's answer, its text and messages masked with
// mask (nil: none).
func graphRun(rep *cirun.Report, text string, results *dagger.Directory, msgs []usecase.Message, mask func(string) string) *GraphRun {
	if mask == nil {
		mask = func(s string) string { return s }
	}
	code := rep.ExitStatus()
	run := &GraphRun{ExitCode: code, Passed: code == 0, Summary: ghoutput.Plain(mask(text)), Results: results, Messages: []*Message{}}
	for _, m := range msgs {
		run.Messages = append(run.Messages, &Message{Level: m.Level, Text: mask(m.Text)})
	}
	if code != 0 {
		run.Failure = ghoutput.Plain(mask(fmt.Sprintf("the CI run failed (exit %d): %s", code, rep.Tally())))
	}
	return run
}

// sourceDigest is the module's usecase.Git: it sees no .git, so a run
// without with-pull-request's --head-sha names its checkout by the digest
// of its source.
type sourceDigest struct{ source *dagger.Directory }

func (g sourceDigest) Head(ctx context.Context, _ string) (string, error) {
	d, err := g.source.Digest(ctx)
	if err != nil {
		return "", fmt.Errorf("the source's digest: %w", err)
	}
	return "source " + d, nil
}

// GraphRun is a finished run of the whole graph.
type GraphRun struct {
	// The exit status `miles-ci ci` gives: 0 when every job CI requires passed, 1 when a shard failed, 125 when a job could not run.
	ExitCode int
	// Whether every job CI requires passed.
	Passed bool
	// The graph as it ran, one line per job and shard, then each failed shard's first failing file, its last lines and its run.log inside results.
	Summary string
	// The results folder: STAGE/N-of-M/ per shard that ran (STAGE/ for an unsharded stage), summary.json (every job), junit.xml (every shard), step-summary.md.
	Results *dagger.Directory
	// The run's notices and warnings: a label the checkout does not know, a stage its diff skips.
	Messages []*Message
	// +private
	Failure string
}

// Assert fails the call when the run failed, with the tally of jobs.
// It returns nothing when every job CI requires passed.
func (r *GraphRun) Assert() error {
	if r.Failure != "" {
		return errors.New(r.Failure)
	}
	return nil
}
