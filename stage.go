package main

import (
	"context"
	"errors"
	"slices"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/internal/resultsdir"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

// Stage selects one stage of the roster with the run's cadence and labels.
// With with-pr they are the pull request's, read once per session.
// +cache="session"
func (m *MilesCi) Stage(
	ctx context.Context,
	// Stage (= suite) name, e.g. stage-c-4-gpu-h200 (see stages).
	name string,
	// CI cadence (default regular).
	// +optional
	cadence Cadence,
	// Raw PR labels passed to run_suite.py, e.g. run-ci-megatron.
	// +optional
	labels []string,
	// Include every known label, as a manual dispatch of a GPU stage does.
	// +optional
	matchAllLabels bool,
	// GitHub event whose trigger facts decide cadence and labels instead.
	// +optional
	event Event,
	// Cron of a scheduled run (with event schedule).
	// +optional
	schedule string,
	// The PR's label names, e.g. run-ci-megatron (with event pull_request).
	// +optional
	prLabels []string,
) (*Stage, error) {
	st := stageArgs{name: name, cadence: string(cadence), labels: labels, matchAllLabels: matchAllLabels,
		event: string(event), schedule: schedule, prLabelsJSON: usecase.PRLabelsJSON(prLabels)}
	return m.stage(ctx, st)
}

// stageArgs are what a stage is selected with (the release run's: its lockfile).
type stageArgs struct {
	name, cadence                 string
	labels                        []string
	matchAllLabels                bool
	event, schedule, prLabelsJSON string
	releaseLock                   string
}

// stage reads the pull request of --pr, then plans every shard of the stage
// once (usecase.PlanStage), so a bad name, cadence or label fails at once and
// the stage's shard, plan, spec and test plan nothing again: the plan travels
// in the Stage's Planned field.
func (m *MilesCi) stage(ctx context.Context, a stageArgs) (*Stage, error) {
	pr := ""
	if m.Pr != 0 {
		// Bad arguments fail before GitHub is asked.
		if err := usecase.CheckPR(usecase.Inputs{Event: a.event, Schedule: a.schedule, PRLabelsJSON: a.prLabelsJSON}); err != nil {
			return nil, err
		}
		var err error
		if pr, err = m.pullRequest(ctx, true); err != nil {
			return nil, err
		}
	}
	return withCheckout(ctx, m.Source, func(dir string) (*Stage, error) { return m.planStage(ctx, a, dir, pr) })
}

// planStage is stage's one planning, of the checkout exported to dir (pr:
// the pull request read, as JSON).
func (m *MilesCi) planStage(ctx context.Context, a stageArgs, dir, pr string) (*Stage, error) {
	in, err := m.inputs(ctx, dir, pr)
	if err != nil {
		return nil, err
	}
	in.Given.Cadence, in.Given.Labels = a.cadence != "", a.labels != nil
	in.Stage, in.Cadence, in.Labels, in.MatchAllLabels = a.name, a.cadence, a.labels, a.matchAllLabels
	in.Event, in.Schedule, in.PRLabelsJSON = a.event, a.schedule, a.prLabelsJSON
	if a.releaseLock != "" {
		lock, err := usecase.ParseReleaseLock(deps.LockFileName, a.releaseLock)
		if err != nil {
			return nil, err
		}
		in.Release = lock
	}
	p, err := usecase.PlanStage(in)
	if err != nil {
		return nil, err
	}
	planned, err := p.Encode()
	if err != nil {
		return nil, err
	}
	return &Stage{Ci: m, Name: a.name, Planned: planned}, nil
}

// Stage is one stage of Miles CI for a run, planned for its cadence and labels.
type Stage struct {
	// +private
	Ci *MilesCi
	// The stage (= suite) name.
	Name string
	// +private
	Planned string
}

// Plan returns miles-ci's plan of every shard of the stage.
// Its json is a JSON array of each shard's plan as `miles-ci plan --json`
// prints it; its messages are what planning the shards found.
func (s *Stage) Plan(ctx context.Context) (*PlanAnswer, error) {
	p, err := usecase.DecodeStagePlan(s.Planned)
	if err != nil {
		return nil, err
	}
	plans, err := p.Plans()
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, r := range p.Shards {
		for _, n := range r.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	return answerOf[PlanAnswer](plans, notesOf(notes))
}

// Shard selects one shard of the stage by its number (2 is shard 2/4).
//
// It is numbered as every output prints it, 1 for an unsharded stage.
func (s *Stage) Shard(
	ctx context.Context,
	// The shard as every output numbers it, 1 to the stage's shard count (shard 2/4 is 2; Miles' --auto-partition-id is one less).
	number int,
) (*Shard, error) {
	sh := &Shard{Stage: s, Number: number}
	req, err := sh.request(ctx)
	if err != nil {
		return nil, err
	}
	sh.Messages = messagesOf(notesOf(req.Notes))
	return sh, nil
}

// Shard is one shard of a stage: what one matrix job of the workflow runs.
type Shard struct {
	// +private
	Stage *Stage
	// The shard as every output numbers it (shard 2/4 is 2).
	Number int
	// What planning the shard found: a label its checkout does not know, a plan read from the container.
	Messages []*Message
}

// request is the shard's run request, from the stage's plan.
func (sh *Shard) request(context.Context) (stagerun.Request, error) {
	p, err := usecase.DecodeStagePlan(sh.Stage.Planned)
	if err != nil {
		return stagerun.Request{}, err
	}
	return p.Shard(sh.Number)
}

// Plan returns miles-ci's plan of the shard; its json is `miles-ci plan ... --json`.
func (sh *Shard) Plan(ctx context.Context) (*PlanAnswer, error) {
	req, err := sh.request(ctx)
	if err != nil {
		return nil, err
	}
	if req.PlanUnavailable != "" {
		return nil, errors.New(req.PlanUnavailable)
	}
	return planAnswer(req.Plan, notesOf(req.Notes))
}

// Spec returns the shard's container spec, without running anything.
// It gives image, env, secret names, caches and steps; its json is
// `miles-ci run ... --dry-run --json`.
func (sh *Shard) Spec(ctx context.Context) (*ContainerSpec, error) {
	req, err := sh.request(ctx)
	if err != nil {
		return nil, err
	}
	return specAnswer(req)
}

// Container returns the shard's container, ready to run.
// Its dependencies are at their resolved commits, the source in the
// workspace, env, GPUs and secrets set (`... container terminal` opens a
// shell in it).
// +cache="session"
func (sh *Shard) Container(ctx context.Context) (*dagger.Container, error) {
	req, err := sh.request(ctx)
	if err != nil {
		return nil, err
	}
	return sh.Stage.Ci.container(ctx, req)
}

// Test runs the shard's tests as CI does and returns the results.
// A failing test is a result (see assert), not an error.
// +cache="never"
func (sh *Shard) Test(
	ctx context.Context,
	// Run id: calls with the same id share one run through the engine's
	// cache (e.g. results, then assert); without one every call runs anew.
	// +optional
	runId string,
	// Minutes after which miles-ci ends the run as a timeout (default: the stage job's, 60 for CPU stages, 360 for GPU stages).
	// +optional
	timeoutMinutes int,
) (*TestRun, error) {
	req, err := sh.request(ctx)
	if err != nil {
		return nil, err
	}
	if err := usecase.CheckTimeoutMinutes(timeoutMinutes); err != nil {
		return nil, err
	}
	req.TimeoutMinutes = timeoutMinutes
	return sh.Stage.Ci.test(ctx, req, runId)
}

// container prepares a request's container.
func (m *MilesCi) container(ctx context.Context, req stagerun.Request) (*dagger.Container, error) {
	s, err := m.newSession(ctx, req.Fork)
	if err != nil {
		return nil, err
	}
	defer s.close()
	p, _, err := stagerun.Prepare(ctx, s.container(), req, nonce(""))
	if err != nil {
		return nil, err
	}
	return s.export(ctx, p.Container)
}

// test prepares and runs a request. The results folder is built here from
// what stagerun.Test read (regular files of fixed names, masked), never a
// folder of the container.
func (m *MilesCi) test(ctx context.Context, req stagerun.Request, runID string) (*TestRun, error) {
	s, err := m.newSession(ctx, req.Fork)
	if err != nil {
		return nil, err
	}
	defer s.close()
	// A secret too short to mask fails here, before anything runs.
	masker, err := s.masker(ctx)
	if err != nil {
		return nil, err
	}
	n := nonce(runID)
	p, spec, err := stagerun.Prepare(ctx, s.container(), req, n)
	if err != nil {
		return nil, errors.New(masker.Mask(err.Error()))
	}
	res, err := stagerun.Test(ctx, p, spec, n, masker)
	if err == nil {
		// The metric gate judges a CUDA shard's records with the checkout's
		// declarations, without a store (the module links none).
		res = usecase.WithGate(ctx, res, req, usecase.GateJudge{Source: sourceFiles(ctx, m.Source)}, masker)
		res, err = usecase.WithPage(res, req, masker)
	}
	if err != nil {
		return nil, errors.New(masker.Mask(err.Error()))
	}
	// The marker says the folder is miles-ci's, so `miles-ci run --results`
	// may replace it later.
	dir := dag.Directory().WithNewFile(resultsdir.Marker, resultsdir.MarkerText)
	for _, f := range res.Files {
		dir = dir.WithNewFile(f.Name, f.Data)
	}
	run := &TestRun{ExitCode: res.Summary.ExitCode, Passed: res.Summary.Passed, Verdict: string(res.Summary.Verdict),
		Summary: ghoutput.Plain(masker.Mask(res.Summary.Text())), Results: dir}
	if err := res.Summary.Err(); err != nil {
		run.Failure = ghoutput.Plain(masker.Mask(err.Error()))
	}
	return run, nil
}

// TestRun is a finished run of a stage shard or a test file.
type TestRun struct {
	// The runner's exit status as the engine recorded it (run_suite.py exits 255 when a file failed; 128+N for signal N).
	ExitCode int
	// Whether the run passed: the runner exited 0 and every planned file reported a pass.
	Passed bool
	// The verdict: passed, failed, timeout or inconsistent (the per-file outcomes contradict the exit status).
	Verdict string
	// The results for a person: one line per planned file.
	Summary string
	// The results folder miles-ci built: summary.json, junit.xml, run.log, plan.txt, status.log, exit-code, elapsed, step-summary.md, artifacts/.
	Results *dagger.Directory
	// +private
	Failure string
}

// Assert fails the call the way the run failed.
// It names the failed, timed-out and not-run files and the exit code; it
// returns nothing when the run passed.
func (r *TestRun) Assert() error {
	if r.Failure != "" {
		return errors.New(r.Failure)
	}
	return nil
}
