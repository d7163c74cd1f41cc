package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/usecase/ci"
	"github.com/radixark/miles-ci/usecase/gatestore"
	"github.com/radixark/miles-ci/usecase/runhistory"
)

// ciSession is the engine a ci run uses: one connection for every shard
// (one a host for a fleet).
type ciSession = ci.Session

// ciConnect connects to the Dagger engine; tests replace it.
// A failed connection is a nil session, not a nil *engine.Session in the
// interface (which a close would call).
var ciConnect = func(ctx context.Context, host engine.Inputs, log io.Writer) (ciSession, error) {
	s, err := engine.Connect(ctx, host, log)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ciShardRun prepares and runs one shard (ci.EngineShards.Run); tests
// replace it.
var ciShardRun func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error)

// ciRun is the command's side of a ci call: the engine a run runs on
// (ci.EngineShards, readied by the use case only when the graph runs
// shards: the results folder checked and locked, the engine's log, the
// metric gate, the sessions), the live progress, and the printing of the
// answer.
type ciRun struct {
	ctx    context.Context
	env    Env
	fs     *flagSet
	gh     *githubFlags
	f      ciEngineFlags
	inputs engine.Inputs
	runner *ci.EngineShards
	// Set by ready, for a run that runs shards.
	m        *report.Masker
	gate     *gatestore.RunStore
	progress *ciProgress
	log      io.Writer
	logPath  string
	closers  []func()
}

// newCIRun is the command's side of a ci call of req, on ctx.
func newCIRun(ctx context.Context, env Env, fs *flagSet, gh *githubFlags, req ci.CIRequest, f ciEngineFlags) *ciRun {
	r := &ciRun{ctx: ctx, env: env, fs: fs, gh: gh, f: f, inputs: engine.Inputs{Repo: orDot(req.Repo), Secrets: stagerun.HandedSecrets(req.FromFork(), env.secret)}}
	r.runner = &ci.EngineShards{Nonce: strconv.FormatInt(time.Now().UnixNano(), 10), CacheRegistry: f.cacheRegistry, Ready: r.ready, Connect: r.connect}
	return r
}

// ready readies a run that runs shards: the cache key and the masker of
// its secrets, its results folder (a new one when none is named: every run
// keeps its results) checked and locked, the engine's log and the metric
// gate.
func (r *ciRun) ready(results, name string) (string, error) {
	env, f := r.env, r.f
	key, masked, err := cacheKey(env, f.cacheRegistry, r.inputs.Secrets)
	if err != nil {
		return "", err
	}
	m, err := report.NewMasker(masked)
	if err != nil {
		return "", err
	}
	r.m, r.runner.Masker, r.runner.CacheKey = m, m, key
	if results == "" {
		if results, err = defaultResults(env, name, time.Now()); err != nil {
			return "", err
		}
	}
	fmt.Fprintf(env.Stderr, "miles-ci: the results go to %s\n", results)
	if err := checkResultsDir(results, r.inputs.Repo); err != nil {
		return "", err
	}
	if err := r.gh.checkSummary(env); err != nil {
		return "", err
	}
	if err := checkHistoryApart(f.fs, f.rec, env, results); err != nil {
		return "", err
	}
	if f.fs != nil {
		if err := checkGateDB(f.fs, env, f.gateDB, r.inputs.Secrets); err != nil {
			return "", err
		}
	}
	unlock, err := lockResults(results)
	if err != nil {
		return "", err
	}
	r.closers = append(r.closers, unlock)
	log, logPath, closeLog, err := engineLogFile(env, runFlags{progress: &f.progress, quiet: &f.quiet, engineLog: &f.engineLog}, m)
	if err != nil {
		return "", err
	}
	r.log, r.logPath, r.closers = log, logPath, append(r.closers, closeLog)
	r.gate = openGate(r.ctx, env, f.gateDB, r.inputs.Repo)
	r.closers = append(r.closers, func() { r.gate.Close() })
	r.runner.Run = ciShardRun
	if r.runner.Run == nil {
		r.runner.Run = r.gate.Judge.PrepareAndTest
	}
	r.progress = newCIProgress(env, m, f.live && !f.progress)
	return results, nil
}

// connect opens a session on a host's engine (the local one for "").
func (r *ciRun) connect(ctx context.Context, h cirun.Host) (ci.Session, error) {
	in := r.inputs
	in.RunnerHost = h.Engine
	return ciConnect(ctx, in, r.log)
}

// notify shows a job's state change of a run (ci.CIRequest.Notify).
func (r *ciRun) notify(j cirun.JobReport) {
	if r.progress != nil {
		r.progress.notify(j)
	}
}

// close lets the results folder go and closes the engine's log and the
// gate, last.
func (r *ciRun) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// failure prints why the call failed: exit 2 for input the command cannot
// use, 125 for an engine the run could not reach (its log named).
func (r *ciRun) failure(err error) int {
	var engineErr *ci.EngineError
	if errors.As(err, &engineErr) {
		annotate(r.env, "error", r.m.Mask(err.Error()))
		pointAtEngineLog(r.env, r.logPath)
		return report.ExitCannotRun
	}
	return ciFailure(r.env, r.fs, err)
}

// print prints the answer: a plan (a dry run, or a re-run with nothing to
// re-run) as text, --json or --mermaid; a what-if's prediction; a run's
// graph and verdict, then its results folder.
func (r *ciRun) print(ans ci.CIAnswer, f ciPrintFlags) int {
	switch ans.Mode {
	case ci.Predicted:
		return printWhatIf(r.env, ans, f.asJSON, f.results, f.repo)
	case ci.Ran:
		return r.printRun(ans)
	}
	printMessages(r.env, ans.Messages)
	switch {
	case f.asJSON:
		out, err := encode.JSON(ans.Report)
		if err != nil {
			return fail(r.env, err)
		}
		writeJSON(r.env.Stdout, out)
	case f.mermaid:
		io.WriteString(r.env.Stdout, ans.Report.Mermaid(ans.Graph))
	default:
		io.WriteString(r.env.Stdout, ans.Report.Text())
	}
	// A dry run exits as the run would before any test: 125 when a job
	// that should run cannot (too few GPUs).
	return ans.Report.ExitStatus()
}

// ciPrintFlags are the flags that say how the answer is printed.
type ciPrintFlags struct {
	asJSON, mermaid bool
	results, repo   string
}

// printRun prints a run: its graph and verdict first, then its results
// folder, in the one order (finish).
func (r *ciRun) printRun(ans ci.CIAnswer) int {
	ctx, env, m, f, runner := r.ctx, r.env, r.m, r.f, r.runner
	printMessages(env, ans.Messages)
	rep, res := ans.Report, ans.Results
	return finish(env, ending{
		verdict: func() {
			io.WriteString(env.Stdout, m.Mask(rep.Text()))
			if res.Reuse != "" {
				io.WriteString(env.Stdout, m.Mask(res.Reuse+"\n"))
			}
		},
		exit: rep.ExitStatus(), gh: r.gh, stepSummary: res.StepSummary,
		record: func() []stagerun.ResultFile {
			if f.fs == nil {
				return nil
			}
			sums := runner.Summaries()
			return recordCI(ctx, f.fs, f.rec, env, runhistory.ShardsRecordRequest{Shards: sums, Repo: r.inputs.Repo, Runs: runhistory.ShardRunsOf(rep, ans.Prediction, sums)}, rep.Run.Commit, rep.Run.RunID, rep.Attempt, ans.Dir)
		},
		recording: f.fs != nil && recording(f.rec, env),
		dir:       ans.Dir, checkout: r.inputs.Repo, files: res.Files, depth: 3, mask: m.Mask,
		written: func() {
			io.WriteString(env.Stdout, m.Mask(usecase.FailuresText(ans.Dir, res.Failures)))
			io.WriteString(env.Stdout, "results: "+ans.Dir+"\n")
		},
		last: func() {
			if rep.ExitStatus() == report.ExitCannotRun && runner.EngineFailed() {
				// Not when only placement left shards not-run (too few
				// GPUs of their kind): the engine's log knows nothing of that.
				pointAtEngineLog(env, r.logPath)
			}
			storeGate(ctx, env, r.gate, slices.Collect(maps.Values(runner.Summaries())))
		},
	})
}

// ciProgress shows a run's job state changes: on a terminal a live table
// of the jobs on stdout, redrawn on each change and erased before the
// graph is printed; otherwise (a CI log) one line per change on stderr.
type ciProgress struct {
	env   Env
	m     *report.Masker
	live  bool
	width int
	start time.Time
	mu    sync.Mutex
	board cirun.Board
	drawn int
}

func newCIProgress(env Env, m *report.Masker, live bool) *ciProgress {
	width := 100 // the table's lines are cut to this unless $COLUMNS says the width
	if n, err := strconv.Atoi(env.Getenv("COLUMNS")); err == nil && n > 10 {
		width = n
	}
	return &ciProgress{env: env, m: m, live: live, width: width, start: time.Now()}
}

func (p *ciProgress) notify(j cirun.JobReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live {
		io.WriteString(p.env.Stderr, ghoutput.Plain(p.m.Mask(j.Line(time.Since(p.start)))))
		return
	}
	// The table is drawn with cursor moves, so its cells are made plain
	// one by one: a test's text moves no cursor and makes no command.
	j.Reason, j.Result = ghoutput.Plain(oneLine(j.Reason)), ghoutput.Plain(oneLine(j.Result))
	p.board.Update(j)
	var text string
	text, p.drawn = p.board.Redraw(p.drawn, time.Since(p.start), p.width)
	drawLive(p.env.Stdout, p.m.Mask(text))
}

// done erases the live table.
func (p *ciProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		drawLive(p.env.Stdout, cirun.Erase(p.drawn))
		p.drawn = 0
	}
}

// oneLine is text on one line, for a cell of the live table.
func oneLine(text string) string { return strings.ReplaceAll(text, "\n", " ") }
