package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/graph"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/pipeline"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/usecase"
)

// ciSession is the engine a ci run uses: one connection for every shard.
type ciSession interface {
	Container() pipeline.Container
	Close() error
}

// ciConnect connects to the Dagger engine; tests replace it.
var ciConnect = func(ctx context.Context, host engine.Inputs, log io.Writer) (ciSession, error) {
	return engine.Connect(ctx, host, log)
}

// ciShard is one shard's results, kept for the results folder.
type ciShard struct {
	dir      string
	files    []pipeline.ResultFile
	summary  *report.Summary
	layerKey string
}

// engineShards runs the graph's shards on one engine session, each through
// the stage-run path (pipeline.Prepare, then pipeline.Test).
type engineShards struct {
	s     ciSession
	nonce string
	m     *report.Masker
	mu    sync.Mutex
	done  []ciShard
}

// ciShardRun prepares and runs one shard on the session; tests replace it.
var ciShardRun = func(ctx context.Context, s ciSession, req pipeline.Request, nonce string, m *report.Masker) (pipeline.Result, pipeline.Spec, error) {
	p, spec, err := pipeline.Prepare(ctx, s.Container(), req, nonce)
	if err != nil {
		return pipeline.Result{}, spec, err
	}
	res, err := pipeline.Test(ctx, p, spec, nonce, m)
	return res, spec, err
}

func (e *engineShards) RunShard(ctx context.Context, req pipeline.Request, u *graph.Unit) graph.Outcome {
	res, spec, err := ciShardRun(ctx, e.s, req, e.nonce, e.m)
	if ctx.Err() != nil {
		return graph.Outcome{Result: graph.ResultCancelled, Reason: "cancelled while running"}
	}
	if err != nil {
		return graph.Outcome{Result: graph.ResultFailure, CannotRun: true, ExitCode: report.ExitCannotRun, Reason: e.m.Mask(err.Error())}
	}
	dir := u.Stage.Name + "/" + strconv.Itoa(u.Shard)
	sum := res.Summary
	e.mu.Lock()
	e.done = append(e.done, ciShard{dir: dir, files: res.Files, summary: &sum, layerKey: layerKey(spec)})
	e.mu.Unlock()
	out := graph.Outcome{Result: graph.ResultSuccess, ExitCode: sum.ExitStatus(), Detail: &sum}
	if !sum.Passed {
		out.Result, out.Reason = graph.ResultFailure, firstFailure(sum)
	}
	return out
}

// BuildImage is not wired to the engine yet: a PR that changes the image
// build inputs cannot run its CUDA stages here.
func (e *engineShards) BuildImage(ctx context.Context, tag string) (string, error) {
	return "", errors.New("miles-ci ci does not build the PR image yet; run the CUDA stages on the released image with --image-tag, or --skip cuda")
}

// firstFailure names the first failing file of a shard.
func firstFailure(s report.Summary) string {
	for _, t := range s.Tests {
		if t.Status != report.Pass {
			return fmt.Sprintf("%s %s (%s)", t.File, t.Status, s.Verdict)
		}
	}
	return string(s.Verdict)
}

// layerKey names a shard's prepared layers up to its dependency phase: the
// image, static environment, caches and every step before the source. Two
// shards with one key share the layers (the engine's cache builds them once).
func layerKey(s pipeline.Spec) string {
	var steps []pipeline.Step
	for _, st := range s.Steps {
		if st.Phase == pipeline.PhaseSource || st.Phase == pipeline.PhaseRun {
			continue
		}
		steps = append(steps, st)
	}
	data, _ := json.Marshal(struct {
		Image  string
		Env    []pipeline.EnvVar
		Caches []pipeline.Cache
		Steps  []pipeline.Step
	}{s.Image, s.Env, s.Caches, steps})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// runCIOnEngine runs the graph on the engine, printing one line per job
// state change, and writes the results folder. Ctrl-C (SIGINT, SIGTERM)
// cancels the running shards; the finished ones keep their results.
func runCIOnEngine(env Env, req usecase.CIRequest, f ciEngineFlags, gh *githubFlags) int {
	host := engine.Inputs{Repo: req.Repo, Secrets: map[string]string{}}
	if host.Repo == "" {
		host.Repo = "."
	}
	for _, name := range []string{pipeline.SecretWandb, pipeline.SecretNeon, pipeline.SecretHF} {
		if v := env.Getenv(name); v != "" && !req.Fork && (req.PR == nil || !req.PR.Fork) {
			host.Secrets[name] = v
		}
	}
	m, err := report.NewMasker(host.Secrets)
	if err != nil {
		return fail(env, err)
	}
	if f.results != "" {
		if err := checkResultsDir(f.results, host.Repo); err != nil {
			return fail(env, err)
		}
	}
	if err := gh.checkSummary(env); err != nil {
		return fail(env, err)
	}
	log, closeLog, err := engineLog(env, runFlags{progress: &f.progress, quiet: &f.quiet, engineLog: &f.engineLog}, m)
	if err != nil {
		return fail(env, err)
	}
	defer closeLog()
	ctx, stop := signalContext()
	defer stop()
	s, err := ciConnect(ctx, host, log)
	if err != nil {
		fmt.Fprint(env.Stderr, ghoutput.Annotation("error", "", 0, m.Mask(err.Error())))
		return report.ExitCannotRun
	}
	defer s.Close()
	runner := &engineShards{s: s, nonce: strconv.FormatInt(time.Now().UnixNano(), 10), m: m}
	start := time.Now()
	var mu sync.Mutex
	req.Shards, req.Now = runner, time.Now
	req.Notify = func(j graph.JobReport) {
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(env.Stderr, m.Mask(stateLine(start, j)))
	}
	ans, err := usecase.CI(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	printMessages(env, ans.Messages)
	rep := ans.Report
	reuse := layerReuse(runner.done)
	stepSummary := ciMarkdown(rep, ans.Graph, reuse)
	if f.results != "" {
		if err := writeCIResults(f.results, host.Repo, rep, runner.done, stepSummary); err != nil {
			fmt.Fprint(env.Stderr, ghoutput.Annotation("error", "", 0, m.Mask(err.Error())))
			return report.ExitCannotRun
		}
	}
	if err := gh.writeSummary(env, m.Mask(stepSummary)); err != nil {
		return fail(env, err)
	}
	io.WriteString(env.Stdout, m.Mask(rep.Text()))
	if reuse != "" {
		io.WriteString(env.Stdout, reuse+"\n")
	}
	if f.results != "" {
		fmt.Fprintf(env.Stdout, "results: %s\n", f.results)
	}
	return rep.ExitStatus()
}

// layerReuse says how many shards shared their prepared dependency layers.
func layerReuse(done []ciShard) string {
	if len(done) == 0 {
		return ""
	}
	by := map[string]int{}
	for _, d := range done {
		by[d.layerKey]++
	}
	reused := 0
	for _, n := range by {
		reused += n - 1
	}
	return fmt.Sprintf("dependency layers: %d shard(s) prepared %d distinct layer set(s); %d reused one another's (same image and refs)", len(done), len(by), reused)
}

// ciMarkdown is the run's step summary: the Mermaid graph coloured by
// outcome, then one row per job.
func ciMarkdown(rep *graph.Report, g *graph.Graph, reuse string) string {
	var b strings.Builder
	b.WriteString("## miles-ci ci\n\n```mermaid\n" + rep.Mermaid(g) + "```\n\n| job | state | GPUs | reason |\n|---|---|---|---|\n")
	for _, j := range rep.Jobs {
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", j.Title(), j.State, j.GPUs, strings.ReplaceAll(j.Reason, "|", "\\|"))
	}
	b.WriteString("\n" + rep.Tally() + "\n")
	if reuse != "" {
		b.WriteString("\n" + reuse + "\n")
	}
	if rep.Cancelled {
		b.WriteString("\n**cancelled**: the run was interrupted; the finished shards keep their results.\n")
	}
	return b.String()
}

// writeCIResults replaces dir with the run's results: DIR/STAGE/SHARD/ per
// shard that ran, summary.json (every job), junit.xml (every shard) and
// step-summary.md.
func writeCIResults(dir, checkout string, rep *graph.Report, done []ciShard, stepSummary string) error {
	sort.Slice(done, func(i, j int) bool { return done[i].dir < done[j].dir })
	var files []pipeline.ResultFile
	var sums []report.Summary
	for _, d := range done {
		for _, f := range d.files {
			files = append(files, pipeline.ResultFile{Name: d.dir + "/" + f.Name, Data: f.Data})
		}
		sums = append(sums, *d.summary)
	}
	js, err := encode.JSON(rep)
	if err != nil {
		return err
	}
	files = append(files, pipeline.ResultFile{Name: "summary.json", Data: string(js)},
		pipeline.ResultFile{Name: "junit.xml", Data: string(report.JUnitAll(sums))},
		pipeline.ResultFile{Name: "step-summary.md", Data: stepSummary})
	return writeResultsDepth(dir, checkout, files, 3)
}
