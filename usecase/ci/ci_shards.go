package ci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/report/htmlpage"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

// EngineShards is the ShardRunner of a real graph run, for both front ends:
// each shard goes through the stage-run path (stagerun.Prepare, then
// stagerun.Test) on one engine session, and its results are kept for the
// run's results folder (Results).
type EngineShards struct {
	// Container is an empty container of the session (its secrets and
	// data folders).
	Container func() stagerun.Container
	// On, for a fleet, gives an empty container of a host's session by the
	// host's name, connecting on first use; an error is the host down
	// (rules §14: its shards go to another host of their kind).
	On func(ctx context.Context, host string) (func() stagerun.Container, error)
	// Fleet are the hosts' names in the order given: with no Container,
	// the PR image is built on the first of them that answers.
	Fleet []string
	// Down, for a fleet, is asked after a shard could not run on a host:
	// an error is the host down (Fleet.Down), and the shard goes back to
	// the scheduler as one that never ran (rules §14).
	Down func(ctx context.Context, host string) error
	// Nonce makes every shard of the run run anew (stagerun.Test).
	Nonce string
	// Masker masks the session's secret values in all a run hands back.
	Masker *report.Masker
	// CacheRegistry is --cache-registry: every shard shares its prepared
	// dependency layers through it (stagerun.Request.CacheRegistry).
	CacheRegistry string
	// CacheKey proves the layers shared through CacheRegistry
	// (stagerun.Request.CacheKey; nil: none is pulled or published).
	CacheKey *stagerun.CacheKey
	// Run prepares and runs one shard; nil is stagerun.Prepare then
	// stagerun.Test (tests replace it).
	Run func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error)
	// Ready and Connect are the front end's side of a run, which the use
	// case asks for only when the graph runs shards: Ready readies the
	// results folder (results: --results or a re-run's own, "" for a new
	// one named after name) and anything the front end keeps for the run
	// (a log, a lock), and says the folder ("" for none); Connect opens a
	// host's engine session, the one host's before the first shard, each
	// fleet host's on first use (it sets Container, or On and Fleet).
	Ready   func(results, name string) (string, error)
	Connect func(ctx context.Context, host cirun.Host) (Session, error)

	// closers end what start opened (the sessions).
	closers []func()
	mu      sync.Mutex
	done    []ciShard
	// engineFailed is set once a shard could not run on the engine (not
	// placed: the engine or the checkout refused it).
	engineFailed bool
	// built are the PR images built, by host and image name.
	built map[string]map[string]stagerun.Container
}

// EngineError is an engine the run could not reach before its first
// shard: nothing ran (exit 125).
type EngineError struct{ Err error }

func (e *EngineError) Error() string { return e.Err.Error() }
func (e *EngineError) Unwrap() error { return e.Err }

// start readies a run on the front end's engine: its cache registry
// checked, its results folder (Ready) and its sessions (Connect): the one
// host's, connected now, or each fleet host's on first use. It says the
// results folder.
func (e *EngineShards) start(ctx context.Context, results, name string, hosts []cirun.Host) (string, error) {
	if e.CacheRegistry != "" {
		if err := stagerun.CheckCacheRegistry(e.CacheRegistry); err != nil {
			return "", &UsageError{Err: err}
		}
	}
	if e.Ready != nil {
		var err error
		if results, err = e.Ready(results, name); err != nil {
			return "", err
		}
	}
	if e.Connect == nil {
		return results, nil // the sessions are given (Container, On)
	}
	if len(hosts) > 0 {
		f := NewFleet(ctx, hosts, e.Connect)
		e.On, e.Fleet, e.Down = f.On, f.Names(), f.Down
		e.closers = append(e.closers, f.Close)
		return results, nil
	}
	s, err := e.Connect(ctx, cirun.Host{})
	if err != nil {
		return "", &EngineError{Err: err}
	}
	e.Container = s.Container
	e.closers = append(e.closers, func() { s.Close() })
	return results, nil
}

// close ends the sessions start opened.
func (e *EngineShards) close() {
	for _, c := range e.closers {
		c()
	}
	e.closers = nil
}

// ciShard is one finished shard's results.
type ciShard struct {
	dir      string
	files    []stagerun.ResultFile
	summary  report.Summary
	layerKey string
	// kept marks a shard an earlier attempt ran, whose files a re-run
	// keeps byte for byte (not recorded again, no layers prepared).
	kept   bool
	layers stagerun.LayerSource
	// refused is the cache registry tag whose image it did not trust.
	refused string
}

// RunShard runs one shard and says how it ended: a failing file is a
// failure naming the first such file; a shard that could not run (the
// engine or the checkout refused it) is CannotRun.
func (e *EngineShards) RunShard(ctx context.Context, req stagerun.Request, u *cirun.Unit) cirun.Outcome {
	run := e.Run
	if run == nil {
		run = usecase.PrepareAndTest
	}
	c, err := e.container(ctx, u.Placement.Host)
	if err != nil && ctx.Err() != nil {
		return cirun.Outcome{Result: cirun.ResultCancelled, Reason: "cancelled while connecting to its host"}
	}
	if err != nil {
		return e.cannotRun(err, true)
	}
	req.CacheRegistry, req.CacheKey = e.CacheRegistry, e.CacheKey
	res, spec, err := run(ctx, c, req, e.Nonce, e.Masker)
	if ctx.Err() != nil {
		return cirun.Outcome{Result: cirun.ResultCancelled, Reason: "cancelled while running"}
	}
	if err != nil && e.Down != nil && u.Placement.Host != "" {
		// The engine may have died under the shard: then the host is down
		// and the shard never ran.
		if down := e.Down(ctx, u.Placement.Host); down != nil && ctx.Err() == nil {
			return e.cannotRun(down, true)
		}
	}
	if err != nil {
		return e.cannotRun(err, false)
	}
	sum := res.Summary
	e.mu.Lock()
	dir := u.ResultsDir()
	e.done = append(e.done, ciShard{dir: dir, files: res.Files, summary: sum, layerKey: u.Placement.Host + "/" + layerKey(spec), layers: res.Layers.Source, refused: res.Layers.Refused})
	e.mu.Unlock()
	out := cirun.Outcome{Result: cirun.ResultSuccess, ExitCode: sum.ExitStatus(), Detail: &sum, Results: dir}
	if !sum.Passed {
		out.Result, out.Reason = cirun.ResultFailure, usecase.FirstFailure(sum)
	}
	return out
}

// cannotRun is the outcome of a shard the engine could not run; hostDown:
// because its host is down.
func (e *EngineShards) cannotRun(err error, hostDown bool) cirun.Outcome {
	e.mu.Lock()
	e.engineFailed = true
	e.mu.Unlock()
	return cirun.Outcome{Result: cirun.ResultFailure, HostDown: hostDown, CannotRun: true, ExitCode: report.ExitCannotRun, Reason: e.Masker.Mask(err.Error())}
}

// EngineFailed reports whether a shard could not run on its engine (where
// the engine's log may say why), not only for want of a host of its kind.
func (e *EngineShards) EngineFailed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.engineFailed
}

// BuildImage builds the PR image (_build-pr-ci-image.yml) from the
// checkout's Dockerfile on the engine, content-cached, and names it as the
// image job's outputs will: the CUDA shards that resolve to that name then
// start from the built container, not from a registry.
func (e *EngineShards) BuildImage(ctx context.Context, tag string) (string, error) {
	empty := e.Container
	var errs []string
	for _, h := range e.Fleet {
		if empty != nil {
			break
		}
		var err error
		if empty, err = e.On(ctx, h); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if empty == nil {
		return "", fmt.Errorf("no host's engine answers: %s", e.Masker.Mask(strings.Join(errs, "; ")))
	}
	c := empty().FromCheckoutDockerfile(deps.PRImageDockerfile)
	// Built here, once: a broken Dockerfile fails the image job, not each
	// CUDA shard after it.
	if _, err := c.Stat(ctx, "/"); err != nil {
		return "", fmt.Errorf("docker build -f %s: %s", deps.PRImageDockerfile, e.Masker.Mask(err.Error()))
	}
	image := deps.CUDAImageRepo + ":" + tag
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.built == nil {
		e.built = map[string]map[string]stagerun.Container{}
	}
	e.built[""] = map[string]stagerun.Container{image: c}
	return image + " from " + deps.PRImageDockerfile, nil
}

// container is an empty container of a host's session (the run's own
// for "") that starts from a built PR image where a shard names one: a
// fleet's other hosts build it from the checkout's Dockerfile on their
// own engine, content-cached, on first use.
func (e *EngineShards) container(ctx context.Context, host string) (stagerun.Container, error) {
	empty := e.Container
	if e.On != nil && (host != "" || empty == nil) {
		var err error
		if empty, err = e.On(ctx, host); err != nil {
			return nil, err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.built[""]) == 0 {
		return empty(), nil
	}
	mine, ok := e.built[host]
	if !ok {
		mine = map[string]stagerun.Container{}
		for image := range e.built[""] {
			mine[image] = empty().FromCheckoutDockerfile(deps.PRImageDockerfile)
		}
		e.built[host] = mine
	}
	return builtImages{Container: empty(), built: maps.Clone(mine)}, nil
}

// builtImages is a container whose From gives the images built in this
// run by name.
type builtImages struct {
	stagerun.Container
	built map[string]stagerun.Container
}

func (b builtImages) From(image string) stagerun.Container {
	if c, ok := b.built[image]; ok {
		return c
	}
	return b.Container.From(image)
}

// layerKey names a shard's prepared layers up to its dependency phase: the
// image, static environment, caches and every step before the source. Two
// shards with one key share the layers (the engine's cache builds them once).
func layerKey(s stagerun.Spec) string {
	var steps []stagerun.Step
	for _, st := range s.Steps {
		if st.Phase == stagerun.PhaseSource || st.Phase == stagerun.PhaseRun {
			continue
		}
		steps = append(steps, st)
	}
	data, _ := json.Marshal(struct {
		Image  string
		Env    []stagerun.EnvVar
		Caches []stagerun.Cache
		Steps  []stagerun.Step
	}{s.Image, s.Env, s.Caches, steps})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// CIResults is what a graph run hands back besides its report: the files
// of its results folder, its step summary and the layer-reuse line.
type CIResults struct {
	// Files are DIR/STAGE/2-of-4/... of every shard that ran (cirun.Unit.ResultsDir), summary.json
	// (every job), junit.xml (every shard), step-summary.md and
	// report.html (the page for a person, htmlpage.RenderCI); the names
	// are miles-ci's own, at most three levels deep.
	Files []stagerun.ResultFile
	// StepSummary is the run's step summary (Markdown).
	StepSummary string
	// Reuse says how many shards shared their dependency layers ("" when
	// no shard ran).
	Reuse string
	// Failures are the failed shards that left results, in graph order.
	Failures []usecase.ShardFailure
}

// Results are the run's results, for the report the graph run gave.
func (e *EngineShards) Results(rep *cirun.Report, g *cirun.Graph) (CIResults, error) {
	e.mu.Lock()
	done := append([]ciShard{}, e.done...)
	e.mu.Unlock()
	sort.Slice(done, func(i, j int) bool { return done[i].dir < done[j].dir })
	r := CIResults{Reuse: layerReuse(done)}
	r.StepSummary = e.Masker.Mask(ghoutput.CIMarkdown(rep, g, r.Reuse) + gateMarkdown(done))
	var sums []report.Summary
	for _, d := range done {
		for _, f := range d.files {
			r.Files = append(r.Files, stagerun.ResultFile{Name: d.dir + "/" + f.Name, Data: f.Data})
		}
		sums = append(sums, d.summary)
	}
	r.Failures = shardFailures(rep, done)
	bindSummaries(rep, done)
	js, err := encode.JSON(rep)
	if err != nil {
		return CIResults{}, err
	}
	page, err := usecase.Page(rep, r.Reuse, r.Failures, e.Masker)
	if err != nil {
		return CIResults{}, err
	}
	r.Files = append(r.Files, stagerun.ResultFile{Name: "summary.json", Data: e.Masker.Mask(string(js))},
		stagerun.ResultFile{Name: "junit.xml", Data: string(report.JUnitAll(sums))},
		stagerun.ResultFile{Name: "step-summary.md", Data: r.StepSummary}, page)
	return r, nil
}

// gateMarkdown is the metric gate's verdicts of each CUDA shard that has
// them (rules §16), for the run's step summary.
func gateMarkdown(done []ciShard) string {
	var b strings.Builder
	for _, d := range done {
		if d.summary.Gate != nil && !d.kept {
			b.WriteString(ghoutput.GateMarkdown(d.dir, d.summary.Gate))
		}
	}
	return b.String()
}

// bindSummaries records in the run record the digest of each shard's own
// summary.json as it is written (JobReport.SummarySHA256): the one reader
// of results folders keeps a shard for a re-run only while they agree.
func bindSummaries(rep *cirun.Report, done []ciShard) {
	digest := map[string]string{}
	for _, d := range done {
		for _, f := range d.files {
			if f.Name == stagerun.SummaryFile {
				sum := sha256.Sum256([]byte(f.Data))
				digest[d.dir] = hex.EncodeToString(sum[:])
			}
		}
	}
	for i := range rep.Jobs {
		if d, ok := digest[rep.Jobs[i].Results]; ok && rep.Jobs[i].Results != "" {
			rep.Jobs[i].SummarySHA256 = d
		}
	}
}

// shardFailures lists the failed shards that left results, in graph order.
func shardFailures(rep *cirun.Report, done []ciShard) []usecase.ShardFailure {
	byDir := map[string]ciShard{}
	for _, d := range done {
		byDir[d.dir] = d
	}
	var out []usecase.ShardFailure
	for _, j := range rep.Jobs {
		d, ok := byDir[j.Results]
		if j.State != cirun.Failed || j.Results == "" || !ok {
			continue
		}
		log := ""
		for _, rf := range d.files {
			if rf.Name == stagerun.RunLogFile {
				log = rf.Data
			}
		}
		out = append(out, usecase.NewShardFailure(j, j.Results, &d.summary, log))
	}
	return out
}

// Summaries are the finished shards' summaries, by results folder
// (STAGE/2-of-4), for recording them in the runtime history.
func (e *EngineShards) Summaries() map[string]report.Summary {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]report.Summary{}
	for _, d := range e.done {
		if !d.kept {
			out[d.dir] = d.summary
		}
	}
	return out
}

// layerReuse says how many shards shared their prepared dependency layers.
func layerReuse(done []ciShard) string {
	by := map[string]int{}
	n := 0
	for _, d := range done {
		if !d.kept {
			by[d.layerKey]++
			n++
		}
	}
	if n == 0 {
		return ""
	}
	reused := 0
	for _, n := range by {
		reused += n - 1
	}
	line := fmt.Sprintf("dependency layers: %d shard(s) prepared %d distinct layer set(s); %d reused one another's (same image and refs)", n, len(by), reused)
	pulled, built := 0, 0
	for _, d := range done {
		switch d.layers {
		case stagerun.LayersPulled:
			pulled++
		case stagerun.LayersBuilt:
			built++
		}
	}
	if pulled+built > 0 {
		line += fmt.Sprintf("; through the cache registry, %d pulled, %d built", pulled, built)
	}
	var refused []string
	for _, d := range done {
		if d.refused != "" && !slices.Contains(refused, d.refused) {
			refused = append(refused, d.refused)
		}
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		line += fmt.Sprintf("; not used, as no proof binds its image to its content key: %s", strings.Join(refused, ", "))
	}
	return line
}

// WhatIfFile is the prediction's JSON in a what-if's results folder.
const WhatIfFile = "what-if.json"

// WhatIfResults are a what-if's results folder: report.html, the
// prediction drawn with a real run's timeline, and what-if.json, the
// prediction as --json prints it.
func (ans CIAnswer) WhatIfResults() ([]stagerun.ResultFile, error) {
	if ans.Prediction == nil {
		return nil, fmt.Errorf("no prediction: the run was not a what-if")
	}
	js, err := encode.JSON(ans.Prediction)
	if err != nil {
		return nil, err
	}
	page, err := htmlpage.RenderCI(htmlpage.CI{Report: ans.Report, WhatIf: true})
	if err != nil {
		return nil, err
	}
	return []stagerun.ResultFile{{Name: htmlpage.FileName, Data: string(page)}, {Name: WhatIfFile, Data: string(js)}}, nil
}
