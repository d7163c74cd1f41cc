package cli

import (
	"context"
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
	"github.com/radixark/miles-ci/hostlock"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/usecase/ci"
	"github.com/radixark/miles-ci/usecase/runhistory"
	"github.com/radixark/miles-ci/whatif"
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

// runCIOnEngine runs the graph on the engine, printing one line per job
// state change, and writes the results folder. Ctrl-C (SIGINT, SIGTERM)
// cancels the running shards; the finished ones keep their results.
func runCIOnEngine(env Env, req ci.CIRequest, f ciEngineFlags, gh *githubFlags) int {
	host := engine.Inputs{Repo: req.Repo, Secrets: stagerun.HandedSecrets(req.FromFork(), env.secret)}
	if host.Repo == "" {
		host.Repo = "."
	}
	key, masked, err := cacheKey(env, f.cacheRegistry, host.Secrets)
	if err != nil {
		return fail(env, err)
	}
	m, err := report.NewMasker(masked)
	if err != nil {
		return fail(env, err)
	}
	if f.results == "" {
		// Every run keeps its results: a new folder when none is named.
		dir, err := defaultResults(ciResultsName(req), time.Now())
		if err != nil {
			return fail(env, err)
		}
		f.results = dir
	}
	fmt.Fprintf(env.Stderr, "miles-ci: the results go to %s\n", f.results)
	if err := checkResultsDir(f.results, host.Repo); err != nil {
		return fail(env, err)
	}
	if err := gh.checkSummary(env); err != nil {
		return fail(env, err)
	}
	if err := checkHistoryApart(f.fs, f.rec, env, f.results); err != nil {
		return fail(env, err)
	}
	if f.fs != nil {
		if err := checkGateDB(f.fs, env, f.gateDB, host.Secrets); err != nil {
			return fail(env, err)
		}
	}
	unlock, err := lockResults(f.results)
	if err != nil {
		return fail(env, err)
	}
	defer unlock()
	log, logPath, closeLog, err := engineLogFile(env, runFlags{progress: &f.progress, quiet: &f.quiet, engineLog: &f.engineLog}, m)
	if err != nil {
		return fail(env, err)
	}
	defer closeLog()
	ctx, stop := signalContext(env)
	defer stop()
	gate := openGate(ctx, env, f.gateDB, host.Repo)
	defer gate.Close()
	run := ciShardRun
	if run == nil {
		run = gate.Judge.PrepareAndTest
	}
	runner := &ci.EngineShards{Nonce: strconv.FormatInt(time.Now().UnixNano(), 10), Masker: m, Run: run, CacheRegistry: f.cacheRegistry, CacheKey: key}
	if len(req.Hosts) > 0 {
		fl := ci.NewFleet(ctx, req.Hosts, func(ctx context.Context, h cirun.Host) (ci.Session, error) {
			in := host
			in.RunnerHost = h.Engine
			return ciConnect(ctx, in, log)
		})
		defer fl.Close()
		runner.On, runner.Fleet, runner.Down = fl.On, fl.Names(), fl.Down
	} else {
		s, err := ciConnect(ctx, host, log)
		if err != nil {
			annotate(env, "error", m.Mask(err.Error()))
			pointAtEngineLog(env, logPath)
			return report.ExitCannotRun
		}
		defer s.Close()
		runner.Container = s.Container
	}
	// A recording run keeps what it predicted beside what it measures
	// (history predictions): the what-if of the same request, before it
	// starts.
	var pred *whatif.Prediction
	if f.fs != nil && req.Previous == nil && recording(f.rec, env) {
		if p, err := ci.Predict(ctx, req); err == nil {
			pred = p
		}
	}
	retry := time.NewTicker(hostlock.Retry)
	defer retry.Stop()
	req.Shards, req.Now, req.Retry, req.RunID = runner, time.Now, retry.C, runner.Nonce
	p := newCIProgress(env, m, f.live && !f.progress)
	req.Notify = p.notify
	ans, err := ci.CI(ctx, req)
	p.done()
	if err != nil {
		return ciFailure(env, err)
	}
	printMessages(env, ans.Messages)
	rep := ans.Report
	res, err := runner.Results(rep, ans.Graph)
	if err != nil {
		return fail(env, err)
	}
	return finish(env, ending{
		verdict: func() {
			io.WriteString(env.Stdout, m.Mask(rep.Text()))
			if res.Reuse != "" {
				io.WriteString(env.Stdout, m.Mask(res.Reuse+"\n"))
			}
		},
		exit: rep.ExitStatus(), gh: gh, stepSummary: res.StepSummary,
		record: func() []stagerun.ResultFile {
			if f.fs == nil {
				return nil
			}
			sums := runner.Summaries()
			return recordCI(ctx, f.fs, f.rec, env, runhistory.ShardsRecordRequest{Shards: sums, Repo: host.Repo, Runs: runhistory.ShardRunsOf(rep, pred, sums)}, rep.Run.Commit, rep.Run.RunID, rep.Attempt, f.results)
		},
		recording: f.fs != nil && recording(f.rec, env),
		dir:       f.results, checkout: host.Repo, files: res.Files, depth: 3, mask: m.Mask,
		written: func() {
			io.WriteString(env.Stdout, m.Mask(usecase.FailuresText(f.results, res.Failures)))
			io.WriteString(env.Stdout, "results: "+f.results+"\n")
		},
		last: func() {
			if rep.ExitStatus() == report.ExitCannotRun && runner.EngineFailed() {
				// Not when only placement left shards not-run (too few
				// GPUs of their kind): the engine's log knows nothing of that.
				pointAtEngineLog(env, logPath)
			}
			storeGate(ctx, env, gate, slices.Collect(maps.Values(runner.Summaries())))
		},
	})
}

// ciResultsName names a ci run's default results folder by its event.
func ciResultsName(req ci.CIRequest) string {
	switch {
	case req.Event != "":
		return req.Event
	case req.PR != nil:
		return "pull_request-" + strconv.Itoa(req.PR.Number)
	}
	return "ci"
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
