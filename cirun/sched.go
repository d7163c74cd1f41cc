package cirun

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/timeline"
)

// State is where a job (or a shard of one) is.
type State string

// The states a job passes through, and how it can end.
const (
	Queued      State = "queued"
	Running     State = "running"
	Passed      State = "passed"
	Failed      State = "failed"
	Cancelled   State = "cancelled"
	Skipped     State = "skipped"
	NotRun      State = "not-run"      // it should run but could not (too few GPUs, an error)
	Excluded    State = "excluded"     // --only / --skip left it out
	NotModelled State = "not-modelled" // miles-ci does not run such a job
	WouldRun    State = "would-run"    // a dry run: it runs
)

// GitHub's job results, as needs.J.result reads them.
const (
	ResultSuccess   = "success"
	ResultFailure   = "failure"
	ResultCancelled = "cancelled"
	ResultSkipped   = "skipped"
)

// Unit is one executor call: a job, or one shard of a stage job.
type Unit struct {
	Node *Node
	// Stage is the stage of a stage job's shard.
	Stage *policy.Stage
	// Shard is the 0-based shard, Shards the matrix size (1: unsharded).
	Shard, Shards int
	// Command is the job's execute_command with its expressions evaluated
	// (the run_suite.py command line), "" when it has none: shown, not read
	// again (Work holds what it says).
	Command string
	// Work is what the unit runs, read once where the graph evaluated its
	// step: the executor takes it as it is.
	Work Work
	// With are the job's called-workflow inputs, evaluated.
	With map[string]string
	// Needs are the results and outputs of the jobs it needs, by job id.
	Needs map[string]Need
	// GPUs is how many GPUs it takes.
	GPUs int
	// Batch, File and RunsOn are a B200 pool unit's: its 1-based batch, its
	// test file and the runner labels the planner gave it.
	Batch  int
	File   string
	RunsOn []string
	// Model is its stage's GPU model where the host's kinds are known.
	Model device.Model
	// Placement is where it runs, set by the scheduler before the executor
	// is called: the executor hands its devices on as they are.
	Placement Placement
}

// Placement is where a unit runs (rules §14): its host, the devices it
// holds there in the host lock, whether the host runs stand-ins, and the
// substitution that put it on another model's devices.
type Placement struct {
	// Host is the name of the host ("" for the one --gpus host).
	Host string
	// Devices are the devices it holds (none for a CPU unit, or on a
	// stand-in host without ids).
	Devices device.Set
	// StandIn says the host is an engine without GPUs running stand-in
	// images: the devices reach the container as its visible-devices
	// variable only, and the engine gives it none.
	StandIn bool
	// Substituted is the --substitute that put it on another model's
	// devices ("" for its own).
	Substituted string
}

// Work is what a unit runs, as data: nothing after the graph reads a
// command line or an image reference again.
type Work struct {
	// Suite is a stage shard's or a pool file's run_suite.py arguments,
	// from its evaluated command (policy.ParseRunSuiteCommand).
	Suite *RunSuiteArgs
	// PoolPlan is the B200 pool planner's request, from its evaluated
	// b200_plan step.
	PoolPlan *policy.PoolRequest
	// PoolFile is a pool file's job as the planner's matrix gave it: the
	// file, its suite, GPU count and runners.
	PoolFile *policy.PoolJob
	// Image is the image a stage shard or pool file runs on: the decision
	// of the image job whose output its container_image input is, else that
	// input as it stands (deps.FromInput); nil when the job gives none.
	Image *deps.Image
}

// Need is the result of a needed job as GitHub's needs context gives it.
type Need struct {
	Result  string
	Outputs map[string]string
}

// Outcome is how a unit ended.
type Outcome struct {
	// Result is success, failure or cancelled.
	Result string
	// Outputs are the job's outputs (a resolver's).
	Outputs map[string]string
	// Reason says why, in a few words (a failing file, an error).
	Reason string
	// ExitCode is the unit's exit status (0 for a resolver).
	ExitCode int
	// CannotRun marks a unit that could not be run at all (exit 125).
	CannotRun bool
	// Detail is the executor's own data for the renderers (a plan, a summary).
	Detail any
	// DryRun marks the outcome of a dry run: the unit would run.
	DryRun bool
	// HostDown marks a unit that did not run because its host's engine
	// could not be reached or failed: the scheduler places it again on
	// another host of its kind, or ends it not-run with Reason.
	HostDown bool
	// Results is the unit's results folder under the run's (Unit.ResultsDir),
	// set when it wrote results.
	Results string
	// Simulated is how long the unit would take, in a what-if
	// (Options.Simulate): the executor answers at once and the unit ends
	// that long after it started on the scheduler's virtual clock.
	Simulated time.Duration
	// Image is an image job's decision, which the stage jobs that take its
	// container_image output run on (Work.Image).
	Image *deps.Image
}

// Executor runs units; the scheduler calls it from several goroutines at
// once (unless Options.Inline).
type Executor interface {
	Run(ctx context.Context, u *Unit) Outcome
}

// Options are the host and the limits of one run.
type Options struct {
	// Host is the one host of a run (--gpus); Hosts, when set, the hosts of
	// a fleet (--hosts), each shard placed on one of them.
	Host  Host
	Hosts []Host
	// Substitutes let stages of a model run on another's devices.
	Substitutes []Substitute
	// StageModel is a stage's GPU model as the checkout declares it
	// (policy.Tables.GPUModel); nil: kinds are not checked.
	StageModel func(policy.Stage) (string, error)
	// Leaser takes a shard's devices in the host lock that other processes
	// honour (nil: none), and Retry ticks while a shard waits for devices
	// another process holds.
	Leaser Leaser
	Retry  <-chan time.Time
	// MaxParallel bounds the units running at once (0: no bound).
	MaxParallel int
	// Only and Skip name stages or backends (cpu, cuda, rocm) to run or
	// leave out; a left-out stage counts as passed for its dependents.
	Only, Skip []string
	// Notify is called once per state change, from one goroutine.
	Notify func(JobReport)
	// Now is the clock for start times and durations (nil: none recorded).
	Now func() time.Time
	// Inline runs each unit in the scheduler's goroutine, one at a time (a
	// dry run: deterministic, instant executors).
	Inline bool
	// Simulate runs a what-if: each unit's executor answers at once with
	// the time the unit would take (Outcome.Simulated), and the scheduler
	// runs the graph on a virtual clock from SimEpoch, every decision the
	// one a real run on these hosts would make (Now is not read).
	Simulate bool
	// Estimate is a unit's expected seconds (its files' durations from the
	// history, else their est_time), by which the scheduler orders the
	// units that could start (Order); nil keeps the graph's order.
	Estimate func(u *Unit) float64
	// Attempt is this run's attempt, GitHub's run_attempt (0: none, a dry
	// run of a first attempt).
	Attempt int
	// Previous are the outcomes of the same run's earlier attempt, by unit
	// (JobReport.Unit). A unit whose previous outcome passed is not run
	// again but kept, as GitHub's "Re-run failed jobs" keeps a job that
	// passed; every other unit runs again when its needs and if: let it.
	Previous map[string]Previous
}

// Previous is a unit's outcome in an earlier attempt of the run.
type Previous struct {
	Outcome Outcome
	// Attempt is the attempt that ran it.
	Attempt int
	// Start and Duration are when it ran and for how long.
	Start    *time.Time
	Duration float64
}

// JobReport is one job, or one shard of a stage job, as it ended.
type JobReport struct {
	Key      string     `json:"job"`
	Workflow string     `json:"workflow"`
	Kind     Kind       `json:"kind"`
	Stage    string     `json:"stage,omitempty"`
	Backend  string     `json:"backend,omitempty"`
	Shard    *int       `json:"shard"`
	Shards   int        `json:"shards,omitempty"`
	State    State      `json:"state"`
	Result   string     `json:"result"`
	Reason   string     `json:"reason,omitempty"`
	GPUs     int        `json:"gpus"`
	Devices  device.Set `json:"devices,omitempty"`
	// Host, Model and Substituted say where a shard runs (rules §14): its
	// host (a fleet's), its stage's GPU model (where the host's kinds are
	// known), and the --substitute that put it on another model.
	Host        string       `json:"host,omitempty"`
	Model       device.Model `json:"gpu_model,omitempty"`
	Substituted string       `json:"substituted,omitempty"`
	Needs       []string     `json:"needs"`
	Required    bool         `json:"required"`
	// Start and Duration are set when a clock was given and the unit ran.
	Start    *time.Time `json:"start,omitempty"`
	Duration float64    `json:"duration_s"`
	ExitCode int        `json:"exit_code"`
	// Results is its results folder under the run's results folder
	// (STAGE/2-of-4), set when it wrote results.
	Results string `json:"results,omitempty"`
	// SummarySHA256 is the digest of that folder's summary.json as the run
	// wrote it: it binds the shard's own record to the run's, so a re-run
	// keeps the shard only while the two agree (usecase.ReadResultsFolder).
	// A results folder's, never a plan's: not in the module's typed answer.
	SummarySHA256 string `json:"summary_sha256,omitempty" typedjson:"-"`
	// Command and Tests are a shard's run_suite.py command and the test
	// files it runs, in shard order.
	Command string   `json:"command,omitempty"`
	Tests   []string `json:"tests,omitempty"`
	// Batch, File and RunsOn are a B200 pool unit's (batch 1-based).
	Batch  int      `json:"batch,omitempty"`
	File   string   `json:"file,omitempty"`
	RunsOn []string `json:"runs_on,omitempty"`
	// Attempt is the run attempt whose outcome this is (GitHub's
	// run_attempt): the run's own, or an earlier one's for a reused job.
	Attempt int `json:"run_attempt,omitempty"`
	// Reused marks a job kept from an earlier attempt, not run again.
	Reused bool `json:"reused,omitempty"`
	// Outputs are a finished job's outputs (a resolver's), which a re-run
	// that keeps the job hands to its dependents.
	Outputs map[string]string `json:"outputs,omitempty"`
	// CannotRun marks a unit that should have run and could not.
	CannotRun bool `json:"-"`
	// Detail is the executor's data (a plan, a stage summary).
	Detail any `json:"-"`
}

// Report is a run (or a dry run) of the graph.
type Report struct {
	Event Event `json:"-"`
	// Run are the facts a re-run must share with this run (the use case
	// sets them on a real run; nil in a dry run).
	Run *RunFacts `json:"run,omitempty"`
	// Attempt is the run's attempt (GitHub's run_attempt; 0 in a dry run
	// of a first attempt).
	Attempt int    `json:"run_attempt,omitempty"`
	Host    string `json:"gpus"`
	// Hosts are a fleet's hosts (--hosts), none for one host.
	Hosts     []HostReport `json:"hosts,omitempty"`
	Cancelled bool         `json:"cancelled"`
	Jobs      []JobReport  `json:"jobs"`
	// Start is when the run started (set when a clock was given), the
	// origin of Timeline's seconds. Neither is in a dry run's answer, so
	// the module's plan object leaves them out.
	Start *time.Time `json:"start,omitempty" typedjson:"-"`
	// Timeline is the run's span against its lower bound and the GPU
	// time used and idle (set when a clock was given).
	Timeline *timeline.Figures `json:"timeline,omitempty" typedjson:"-"`
}

// Exit statuses of a run: every required job passed; a job failed; a job
// that should have run could not; the run was cancelled (SIGINT).
const (
	ExitPassed    = 0
	ExitFailed    = 1
	ExitCannotRun = 125
	ExitCancelled = 130
)

// ExitStatus is the verdict: 0 only when every job CI would require passed.
func (r *Report) ExitStatus() int {
	failed, cannot := false, false
	for _, j := range r.Jobs {
		switch {
		case j.State == Failed:
			failed = true
		case j.State == NotRun || (j.State == NotModelled && j.Required) || j.CannotRun:
			cannot = true
		}
	}
	switch {
	case r.Cancelled:
		return ExitCancelled
	case failed:
		return ExitFailed
	case cannot:
		return ExitCannotRun
	}
	return ExitPassed
}

// nodeRun is a node's progress.
type nodeRun struct {
	n       *Node
	state   State
	result  string
	reason  string
	outputs map[string]string
	units   []*unitRun
	// parallel is the matrix's max-parallel (0: no bound); batchParallel
	// bounds the B200 pool's batches running at once (its outer matrix).
	parallel      int
	batchParallel int
	children      []*nodeRun
	parent        *nodeRun
	needs         []*nodeRun
}

type unitRun struct {
	u      Unit
	place  hold
	placed bool
	// waiting says which devices another process holds while it waits.
	waiting string
	state   State
	out     Outcome
	start   time.Time
	dur     time.Duration
	cancel  context.CancelFunc
	node    *nodeRun
	ran     bool
	started bool
	// kept is the earlier attempt's outcome the unit reuses (nil: it ran
	// in this attempt, or has not ended).
	kept *Previous
}

type scheduler struct {
	g         *Graph
	opt       Options
	exec      Executor
	nodes     []*nodeRun
	byKey     map[string]*nodeRun
	place     *placer
	running   int
	done      chan *unitRun
	cancelled bool
	// t0 is when the run started (the zero time without a clock).
	t0 time.Time
	// clock and pending are a what-if's virtual time and the units it has
	// running, by when each ends (Options.Simulate).
	clock   time.Time
	pending []*unitRun
	ends    map[*unitRun]time.Time
	// est are the units' estimates, asked once each (Options.Estimate),
	// and gate the nodes other stage jobs wait for (gates).
	est  map[*unitRun]float64
	gate map[*nodeRun]bool
	// images are the image jobs' decisions, by the reference each gave as
	// its container_image output.
	images map[string]deps.Image
}

// SimEpoch is the virtual clock's start in a what-if: its times are
// seconds after it.
var SimEpoch = time.Unix(0, 0).UTC()

// Schedule runs the graph: each job when its needs have ended and its if:
// holds, each stage job's shards as a matrix within its max-parallel, the
// global MaxParallel and the host's GPUs, until every job has ended or ctx
// is done (then the running units are cancelled, and the rest with them).
func Schedule(ctx context.Context, g *Graph, exec Executor, opt Options) *Report {
	hosts := opt.Hosts
	if len(hosts) == 0 {
		hosts = []Host{opt.Host}
	}
	s := &scheduler{g: g, opt: opt, exec: exec, byKey: map[string]*nodeRun{}, place: newPlacer(hosts, opt.Substitutes, len(opt.Hosts) > 0), done: make(chan *unitRun),
		clock: SimEpoch, ends: map[*unitRun]time.Time{}, est: map[*unitRun]float64{}, gate: map[*nodeRun]bool{}}
	if opt.Simulate {
		s.opt.Leaser, s.opt.Retry, s.opt.Inline = nil, nil, false
	}
	s.t0 = s.now()
	for _, n := range g.Nodes {
		nr := &nodeRun{n: n, state: Queued}
		s.nodes = append(s.nodes, nr)
		s.byKey[n.Key] = nr
	}
	for _, nr := range s.nodes {
		for _, k := range nr.n.Needs {
			nr.needs = append(nr.needs, s.byKey[k])
		}
		if p := s.byKey[nr.n.Parent]; p != nil {
			nr.parent = p
			p.children = append(p.children, nr)
		}
	}
	for {
		if ctx.Err() != nil && !s.cancelled {
			s.cancelAll()
		}
		progressed := true
		for progressed && !s.cancelled {
			progressed = s.advance(ctx)
			progressed = s.finishNodes() || progressed
		}
		if s.running == 0 {
			if s.allEnded() {
				break
			}
			if !s.cancelled && s.place.waitsElsewhere() && s.opt.Retry != nil {
				// Every shard that could start waits for devices another
				// process holds: wait for it to let them go.
				select {
				case <-s.opt.Retry:
					s.place.retry()
				case <-ctx.Done():
				}
				continue
			}
			if s.cancelled || !s.advance(ctx) {
				// Nothing runs and nothing can start: end what is left
				// (cancelled, or waiting for a unit that never fits).
				s.endStuck()
				s.finishNodes()
				s.forceEnd()
				break
			}
			continue
		}
		if s.opt.Simulate {
			s.unitEnded(s.nextEnd())
			continue
		}
		select {
		case ur := <-s.done:
			s.unitEnded(ur)
		case <-s.opt.Retry:
			s.place.retry()
		case <-ctx.Done():
			if !s.cancelled {
				s.cancelAll()
			}
			ur := <-s.done
			s.unitEnded(ur)
		}
	}
	return s.report()
}

func (s *scheduler) allEnded() bool {
	for _, nr := range s.nodes {
		if !ended(nr.state) {
			return false
		}
	}
	return true
}

func ended(st State) bool { return st != Queued && st != Running }

// advance starts what can start: nodes whose needs have ended, then units
// that fit. It reports whether anything changed.
func (s *scheduler) advance(ctx context.Context) bool {
	changed := false
	for _, nr := range s.nodes {
		if nr.state != Queued {
			continue
		}
		if nr.parent != nil {
			if nr.parent.state == Queued {
				continue
			}
			if nr.parent.state != Running {
				s.endNode(nr, Skipped, ResultSkipped, "its calling job "+nr.parent.n.ID+" did not run")
				changed = true
				continue
			}
		}
		if slices.ContainsFunc(nr.needs, func(d *nodeRun) bool { return !ended(d.state) }) {
			continue
		}
		s.start(nr)
		changed = true
	}
	for _, ur := range s.ready() {
		nr := ur.node
		if ur.state != Queued {
			continue
		}
		if s.keep(ur) {
			changed = true
			continue
		}
		if s.opt.MaxParallel > 0 && s.running >= s.opt.MaxParallel {
			return changed
		}
		if nr.parallel > 0 && nr.runningUnits() >= nr.parallel {
			continue
		}
		if !nr.batchMayStart(ur.u.Batch) {
			continue
		}
		if !s.placeUnit(ur) {
			continue
		}
		s.launch(ctx, ur)
		changed = true
		if s.opt.Inline {
			s.unitEnded(<-s.done)
		}
	}
	return changed
}

// keep ends a unit with its earlier attempt's outcome when that passed: it
// takes no devices and the executor is not called.
func (s *scheduler) keep(ur *unitRun) bool {
	p, ok := s.opt.Previous[s.unitReport(ur).Unit()]
	if !ok || p.Outcome.Result != ResultSuccess || p.Outcome.DryRun {
		return false
	}
	ur.kept, ur.out, ur.state, ur.ran = &p, p.Outcome, Passed, true
	s.notifyUnit(ur)
	return true
}

// batchMayStart reports whether a unit of batch b may start: its batch has
// started, or every earlier batch has and fewer than batchParallel batches
// are open (GitHub starts a matrix's entries in order).
func (nr *nodeRun) batchMayStart(b int) bool {
	if nr.batchParallel <= 0 || b == 0 {
		return true
	}
	started, open := map[int]bool{}, map[int]bool{}
	for _, u := range nr.units {
		started[u.u.Batch] = started[u.u.Batch] || u.started
		open[u.u.Batch] = open[u.u.Batch] || !ended(u.state)
	}
	if started[b] {
		return true
	}
	active := 0
	for batch := range open {
		if open[batch] && started[batch] {
			active++
		}
		if batch < b && open[batch] && !started[batch] {
			return false
		}
	}
	return active < nr.batchParallel
}

func (nr *nodeRun) runningUnits() int {
	n := 0
	for _, u := range nr.units {
		if u.state == Running {
			n++
		}
	}
	return n
}

func (s *scheduler) now() time.Time {
	switch {
	case s.opt.Simulate:
		return s.clock
	case s.opt.Now == nil:
		return time.Time{}
	}
	return s.opt.Now()
}

// clocked says whether the run keeps times: a real run's clock, or a
// what-if's virtual one.
func (s *scheduler) clocked() bool { return s.opt.Now != nil || s.opt.Simulate }

func (s *scheduler) launch(ctx context.Context, ur *unitRun) {
	uctx, cancel := context.WithCancel(ctx)
	ur.cancel, ur.state, ur.start, ur.started = cancel, Running, s.now(), true
	s.running++
	s.notifyUnit(ur)
	u := ur.u
	if s.opt.Simulate {
		// A what-if: the executor answers at once; the unit ends when the
		// virtual clock reaches its start and the time it would take.
		ur.out = s.exec.Run(uctx, &u)
		s.ends[ur] = s.clock.Add(max(ur.out.Simulated, 0))
		s.pending = append(s.pending, ur)
		return
	}
	go func() {
		ur.out = s.exec.Run(uctx, &u)
		s.done <- ur
	}()
}

func (s *scheduler) unitEnded(ur *unitRun) {
	s.running--
	ur.cancel()
	s.release(ur)
	if ur.out.HostDown && s.hostDown(ur) {
		return
	}
	if !ur.start.IsZero() {
		ur.dur = s.now().Sub(ur.start)
	}
	ur.ran = true
	if img := ur.out.Image; img != nil {
		if s.images == nil {
			s.images = map[string]deps.Image{}
		}
		s.images[img.Image] = *img
	}
	switch {
	case ur.out.Result == ResultSuccess && ur.out.DryRun:
		ur.state = WouldRun
	case ur.out.Result == ResultSuccess:
		ur.state = Passed
	case ur.out.Result == ResultCancelled:
		ur.state = Cancelled
	case ur.out.CannotRun:
		ur.state = NotRun
	default:
		ur.state = Failed
	}
	s.notifyUnit(ur)
	nr := ur.node
	if ur.state == Failed && nr.n.FailFast && len(nr.units) > 1 {
		// fail-fast: GitHub cancels the matrix's other jobs.
		for _, o := range nr.units {
			switch o.state {
			case Queued:
				o.state, o.out.Reason = Cancelled, "fail-fast: "+policy.Partition{ID: ur.u.Shard, Size: ur.u.Shards}.String()+" failed"
				s.notifyUnit(o)
			case Running:
				o.cancel()
			}
		}
	}
	s.finishNodes()
}

// finishNodes ends the running nodes whose units (or called jobs) all ended.
func (s *scheduler) finishNodes() (changed bool) {
	for again := true; again; changed = changed || again {
		again = false
		for _, nr := range s.nodes {
			if nr.state != Running {
				continue
			}
			if nr.n.Kind == KindCall {
				if slices.ContainsFunc(nr.children, func(c *nodeRun) bool { return !ended(c.state) }) {
					continue
				}
				res := ResultSuccess
				notRun := false
				for _, c := range nr.children {
					notRun = notRun || c.state == NotRun
					switch c.result {
					case ResultFailure:
						res = ResultFailure
					case ResultCancelled:
						if res == ResultSuccess {
							res = ResultCancelled
						}
					}
				}
				st, why := stateOf(res), ""
				for _, c := range nr.children {
					if why == "" && c.result != ResultSuccess && c.result != ResultSkipped {
						why = c.n.ID + ": " + c.reason
					}
				}
				// A called workflow (the B200 pool job, a release
				// call): would-run in a dry run, not-run when its
				// jobs could not run and none failed.
				switch {
				case res == ResultSuccess && slices.ContainsFunc(nr.children, func(c *nodeRun) bool { return c.state == WouldRun }):
					st = WouldRun
				case res == ResultFailure && notRun && !slices.ContainsFunc(nr.children, func(c *nodeRun) bool { return c.state == Failed }):
					st = NotRun
				}
				s.endNode(nr, st, res, why)
				again = true
				continue
			}
			if slices.ContainsFunc(nr.units, func(u *unitRun) bool { return !ended(u.state) }) {
				continue
			}
			res, reason := ResultSuccess, ""
			outputs := map[string]string{}
			dry := len(nr.units) > 0
			for _, u := range nr.units {
				for k, v := range u.out.Outputs {
					outputs[k] = v
				}
				dry = dry && u.state == WouldRun
				switch u.state {
				case Failed, NotRun:
					res = ResultFailure
					if reason == "" {
						reason = u.out.Reason
					}
				case Cancelled:
					if res == ResultSuccess {
						res, reason = ResultCancelled, u.out.Reason
					}
				}
			}
			nr.outputs = outputs
			st := stateOf(res)
			if dry {
				st = WouldRun
			}
			if res == ResultFailure && !slices.ContainsFunc(nr.units, func(u *unitRun) bool { return u.state == Failed }) {
				st = NotRun // its shards or files could not run; none failed
			}
			s.endNode(nr, st, res, reason)
			again = true
		}
	}
	return changed
}

func stateOf(result string) State {
	switch result {
	case ResultSuccess:
		return Passed
	case ResultCancelled:
		return Cancelled
	case ResultSkipped:
		return Skipped
	}
	return Failed
}

func (s *scheduler) endNode(nr *nodeRun, st State, result, reason string) {
	nr.state, nr.result = st, result
	if reason != "" {
		nr.reason = reason
	}
	if len(nr.units) == 0 {
		s.notifyNode(nr)
	}
}

// cancelAll is SIGINT: the running units are cancelled, nothing new starts.
func (s *scheduler) cancelAll() {
	s.cancelled = true
	for _, nr := range s.nodes {
		for _, ur := range nr.units {
			if ur.state == Running {
				ur.cancel()
			}
		}
	}
}

// endStuck ends what can never start: after a cancel everything left, else
// units waiting for devices that the run can no longer free.
func (s *scheduler) endStuck() {
	for _, nr := range s.nodes {
		for _, ur := range nr.units {
			if ur.state == Queued {
				ur.state, ur.out.Result, ur.out.Reason = Cancelled, ResultCancelled, "the run was cancelled"
				s.notifyUnit(ur)
			}
		}
		if nr.state == Queued {
			s.endNode(nr, Cancelled, ResultCancelled, "the run was cancelled")
		}
	}
}

// forceEnd ends whatever is still open after endStuck (a calling job whose
// called jobs ended in the same pass), so the run always terminates.
func (s *scheduler) forceEnd() {
	for _, nr := range s.nodes {
		if !ended(nr.state) {
			s.endNode(nr, Cancelled, ResultCancelled, "the run was cancelled")
		}
	}
}

// Partition is the shard of a sharded stage the unit runs, nil for any other
// unit (an unsharded stage, a pool file, a resolver).
func (u *Unit) Partition() *policy.Partition {
	if u.Stage == nil || u.Shards <= 1 || u.Batch > 0 {
		return nil
	}
	return &policy.Partition{ID: u.Shard, Size: u.Shards}
}

// ResultsDir is the unit's folder in a run's results: STAGE/2-of-4 for a
// shard (policy.Partition.Folder), STAGE for an unsharded stage, SUITE/N for
// the Nth file (0 first) of a pool plan.
func (u *Unit) ResultsDir() string {
	if u.Stage == nil {
		return ""
	}
	return resultsDir(u.Stage.Name, u.Batch > 0, u.Shard, u.Partition())
}

func resultsDir(stage string, pool bool, index int, p *policy.Partition) string {
	switch {
	case pool:
		return stage + "/" + strconv.Itoa(index)
	case p != nil:
		return stage + "/" + p.Folder()
	}
	return stage
}

// Input is a called workflow's input as the job reads inputs.NAME: the
// call's value, else the declared default; "" in a triggered run.
func (u *Unit) Input(name string) string {
	run := u.Node.Run
	if run.Caller == "" {
		return ""
	}
	if v, ok := run.Inputs[name]; ok {
		return v
	}
	return run.Defaults[name]
}

// start decides a node whose needs have ended: its if:, then what it runs.
func (s *scheduler) start(nr *nodeRun) {
	n := nr.n
	if s.cancelled {
		s.endNode(nr, Cancelled, ResultCancelled, "the run was cancelled")
		return
	}
	if s.excluded(nr) {
		nr.state, nr.result, nr.reason = Excluded, ResultSuccess, "left out by --only/--skip (its dependents see it as passed)"
		s.notifyNode(nr)
		return
	}
	vars := s.vars(nr, -1, 1)
	ok, err := policy.EvalIf(n.If, vars.get, s.status(nr))
	if err != nil {
		s.endNode(nr, NotRun, ResultFailure, fmt.Sprintf("%s:%d: cannot evaluate the if: of job %s: %v", n.Workflow, n.Line, n.ID, err))
		return
	}
	if !ok {
		s.endNode(nr, Skipped, ResultSkipped, s.skipReason(nr, vars))
		return
	}
	if n.Kind == KindPoolRun {
		s.expandPool(nr, vars)
		return
	}
	with := map[string]string{}
	for k, v := range n.With {
		ev, err := policy.EvalString(v, vars.get)
		if err != nil && k != "execute_command" {
			s.endNode(nr, NotRun, ResultFailure, fmt.Sprintf("%s:%d: cannot evaluate input %s of job %s: %v", n.Workflow, n.Line, k, n.ID, err))
			return
		}
		with[k] = ev
	}
	switch n.Kind {
	case KindOther:
		if n.NotModelled != "" {
			nr.state, nr.result, nr.reason = NotModelled, ResultSkipped, n.NotModelled
			s.notifyNode(nr)
			return
		}
	case KindCall:
		// The called jobs share one Run: its inputs are the call's with:.
		if len(nr.children) > 0 {
			for k, v := range with {
				nr.children[0].n.Run.Inputs[k] = v
			}
		}
		nr.state = Running
		s.notifyNode(nr)
		return
	case KindRelease:
		nr.outputs = s.g.Event.ReleaseOutputs
		s.endNode(nr, Passed, ResultSuccess, "release-lock.json stands in for the branch cut")
		return
	case KindStage:
		s.expand(nr, with)
		return
	}
	ur := &unitRun{u: Unit{Node: n, Shards: 1, With: with, Needs: s.needs(nr)}, state: Queued, node: nr}
	if n.Kind == KindPoolPlan {
		cmd, err := policy.EvalString(n.Script, vars.get)
		if err != nil {
			s.endNode(nr, NotRun, ResultFailure, fmt.Sprintf("%s:%d: cannot evaluate the planner step of job %s: %v", n.Workflow, n.Line, n.ID, err))
			return
		}
		ur.u.Command = cmd
		preq, err := ParsePoolPlan(cmd)
		ur.u.Work.PoolPlan = &preq
		if err != nil {
			ur.state, ur.out = NotRun, Outcome{Result: ResultFailure, CannotRun: true, Reason: fmt.Sprintf("job %s: %v", n.ID, err)}
		}
	}
	nr.state = Running
	nr.units = []*unitRun{ur}
	if ur.state == NotRun {
		s.notifyUnit(ur)
	}
}

// image is the image a stage job's evaluated container_image input names:
// the decision of the image job that gave it, else the reference as it
// stands; nil for none.
func (s *scheduler) image(ref string) *deps.Image {
	if ref == "" {
		return nil
	}
	if img, ok := s.images[ref]; ok {
		return &img
	}
	return &deps.Image{Image: ref, Source: deps.FromInput}
}

// suiteOf reads a stage shard's evaluated run_suite.py command into its
// arguments, which must run the shard the matrix entry is (shard of
// shards, or the whole stage).
func suiteOf(cmd string, shard int) (*RunSuiteArgs, error) {
	args, err := ParseRunSuite(cmd)
	if err != nil {
		return nil, err
	}
	if args.Partition != nil && args.Partition.ID != shard {
		return nil, fmt.Errorf("its run_suite.py command runs --auto-partition-id %d in matrix entry %d: %q", args.Partition.ID, shard, cmd)
	}
	return &args, nil
}

// expand makes a stage job's matrix: one unit per shard of its cadence.
func (s *scheduler) expand(nr *nodeRun, with map[string]string) {
	n := nr.n
	st := n.Stages[0]
	cadence := s.cadence(nr)
	shards := max(st.ShardsFor(cadence), 1)
	nr.parallel = maxParallel(st, cadence)
	gpus, err := StageGPUs(st)
	nr.state = Running
	for i := 0; i < shards; i++ {
		vars := s.vars(nr, i, shards)
		cmd, cerr := policy.EvalString(n.With["execute_command"], vars.get)
		stage := st
		u := Unit{Node: n, Stage: &stage, Shard: i, Shards: shards, Command: strings.Join(strings.Fields(cmd), " "), With: with, Needs: s.needs(nr), GPUs: gpus}
		u.Work.Image = s.image(with["container_image"])
		ur := &unitRun{u: u, state: Queued, node: nr}
		merr := s.setModel(&ur.u)
		var aerr error
		if cerr == nil {
			ur.u.Work.Suite, aerr = suiteOf(ur.u.Command, i)
		}
		switch {
		case err != nil:
			ur.state, ur.out = NotRun, Outcome{Result: ResultFailure, Reason: err.Error(), CannotRun: true}
		case cerr != nil:
			ur.state, ur.out = NotRun, Outcome{Result: ResultFailure, Reason: fmt.Sprintf("%s:%d: cannot evaluate the execute_command of job %s: %v", n.Workflow, n.Line, n.ID, cerr), CannotRun: true}
		case merr != nil:
			ur.state, ur.out = NotRun, Outcome{Result: ResultFailure, Reason: merr.Error(), CannotRun: true}
		case !s.place.fits(s.need(&ur.u)):
			ur.state, ur.out = NotRun, Outcome{Result: ResultFailure, Reason: s.place.why(s.need(&ur.u)), CannotRun: true}
		case aerr != nil:
			ur.state, ur.out = NotRun, Outcome{Result: ResultFailure, Reason: fmt.Sprintf("job %s: %v", n.ID, aerr), CannotRun: true}
		}
		nr.units = append(nr.units, ur)
		s.notifyUnit(ur) // queued (it may wait for devices), or not-run
	}
}

func maxParallel(st policy.Stage, c policy.Cadence) int {
	if st.ByCadence != nil {
		if v, ok := st.ByCadence.MaxParallel[c]; ok {
			return v
		}
	}
	if c == policy.Weekly {
		return st.MaxParallelWeekly
	}
	return st.MaxParallel
}

// cadence is the cadence the run's policy job resolved (regular before it).
func (s *scheduler) cadence(nr *nodeRun) policy.Cadence {
	for _, o := range s.nodes {
		if o.n.Run == nr.n.Run && o.n.Kind == KindPolicy && o.outputs["cadence"] != "" {
			if c, err := policy.ParseCadence(o.outputs["cadence"]); err == nil {
				return c
			}
		}
	}
	return policy.Regular
}

func (s *scheduler) needs(nr *nodeRun) map[string]Need {
	out := map[string]Need{}
	for _, d := range nr.needs {
		out[d.n.ID] = Need{Result: d.result, Outputs: d.outputs}
	}
	return out
}

// excluded applies --only and --skip to stage jobs, and leaves out a PR
// image build no stage that runs would use.
func (s *scheduler) excluded(nr *nodeRun) bool {
	if nr.n.Kind == KindPRImage {
		return !s.anyDependentStage(nr, map[*nodeRun]bool{})
	}
	if nr.n.Kind == KindCall && len(nr.n.Stages) > 0 {
		// The B200 pool job: left out when all its suites are.
		return !slices.ContainsFunc(nr.n.Stages, func(st policy.Stage) bool { return !s.stageExcluded(st) })
	}
	if nr.n.Kind != KindStage {
		return false
	}
	return s.stageExcluded(nr.n.Stages[0])
}

func (s *scheduler) stageExcluded(st policy.Stage) bool {
	match := func(list []string) bool {
		return slices.Contains(list, st.Name) || slices.Contains(list, string(st.Backend))
	}
	return (len(s.opt.Only) > 0 && !match(s.opt.Only)) || match(s.opt.Skip)
}

func (s *scheduler) anyDependentStage(nr *nodeRun, seen map[*nodeRun]bool) bool {
	for _, o := range s.nodes {
		if seen[o] || !slices.Contains(o.needs, nr) {
			continue
		}
		seen[o] = true
		if (o.n.Kind == KindStage || o.n.Kind == KindCall && len(o.n.Stages) > 0) && !s.excluded(o) {
			return true
		}
		if s.anyDependentStage(o, seen) {
			return true
		}
	}
	return false
}

// status answers the status functions for a node: success() and failure()
// over every ancestor, as GitHub does.
func (s *scheduler) status(nr *nodeRun) func(string) bool {
	return func(name string) bool {
		switch name {
		case "always":
			return true
		case "cancelled":
			return s.cancelled
		}
		anc := ancestors(nr)
		if name == "failure" {
			return slices.ContainsFunc(anc, func(a *nodeRun) bool { return a.result == ResultFailure })
		}
		return !s.cancelled && !slices.ContainsFunc(anc, func(a *nodeRun) bool { return a.result != ResultSuccess })
	}
}

func ancestors(nr *nodeRun) []*nodeRun {
	var out []*nodeRun
	seen := map[*nodeRun]bool{}
	var walk func(*nodeRun)
	walk = func(x *nodeRun) {
		for _, d := range x.needs {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
				walk(d)
			}
		}
	}
	walk(nr)
	return out
}

// exprVars binds the contexts an expression of one job reads, and records
// what it read for the skip reason.
type exprVars struct {
	s     *scheduler
	nr    *nodeRun
	shard int
	total int
	read  []string
	// matrix is the matrix entry of an include: matrix (a pool's batch or
	// file); inputs, when set, are the inputs of a workflow the pool calls.
	matrix map[string]any
	inputs map[string]any
}

func (s *scheduler) vars(nr *nodeRun, shard, total int) *exprVars {
	return &exprVars{s: s, nr: nr, shard: shard, total: total}
}

func (v *exprVars) get(p string) (any, bool) {
	val, ok := v.lookup(p)
	if ok && strings.HasPrefix(p, "needs.") {
		b, _ := json.Marshal(val)
		v.read = append(v.read, p+"="+string(b))
	}
	return val, ok
}

func (v *exprVars) lookup(p string) (any, bool) {
	e := v.s.g.Event
	run := v.nr.n.Run
	parts := strings.Split(p, ".")
	switch parts[0] {
	case "needs":
		if len(parts) < 3 {
			return nil, false
		}
		for _, d := range v.nr.needs {
			if d.n.ID != parts[1] {
				continue
			}
			switch {
			case parts[2] == "result" && len(parts) == 3:
				return d.result, true
			case parts[2] == "outputs" && len(parts) == 4:
				return d.outputs[parts[3]], true
			}
			return nil, true
		}
		return nil, false // GitHub refuses a needs context of a job not needed
	case "matrix":
		if v.matrix != nil {
			if len(parts) != 2 {
				return nil, true
			}
			return v.matrix[parts[1]], true
		}
		if v.shard < 0 {
			return nil, false
		}
		return float64(v.shard), true
	case "strategy":
		if p == "strategy.job-total" && v.total > 0 {
			return float64(v.total), true
		}
		return nil, true
	case "inputs":
		if len(parts) != 2 {
			return nil, true
		}
		if v.inputs != nil {
			return v.inputs[parts[1]], true
		}
		if val, ok := run.Inputs[parts[1]]; ok {
			return typedInput(run.Types[parts[1]], val), true
		}
		if run.Caller == "" {
			if val, ok := e.Inputs[parts[1]]; ok {
				return val, true
			}
		}
		if val, ok := run.Defaults[parts[1]]; ok {
			return typedInput(run.Types[parts[1]], val), true
		}
		return nil, true
	case "github":
		return v.github(p)
	}
	return nil, true // env, vars, secrets, steps, runner: empty here
}

// typedInput is a workflow_call input as the called workflow reads it: a
// boolean input is a boolean ('false' would be truthy as a string), a
// number a number.
func typedInput(typ, val string) any {
	switch typ {
	case "boolean":
		return val == "true"
	case "number":
		if f, err := strconv.ParseFloat(val, 64); err == nil {
			return f
		}
	}
	return val
}

func (v *exprVars) github(p string) (any, bool) {
	e := v.s.g.Event
	isPR := e.Name == EventPullRequest
	var prNumber any
	if isPR && e.PRNumber > 0 {
		prNumber = float64(e.PRNumber)
	}
	switch p {
	case "github.event_name":
		if e.Name == EventRelease {
			return EventDispatch, true // a called workflow sees its caller's event
		}
		return e.Name, true
	case "github.event.action":
		if isPR {
			return e.action(), true
		}
		return nil, true
	case "github.event.schedule":
		if e.Name == EventSchedule {
			return e.Schedule, true
		}
		return nil, true
	case "github.event.number", "github.event.pull_request.number":
		return prNumber, true
	case "github.event.pull_request.labels.*.name":
		if !isPR {
			return nil, true
		}
		labels := make([]any, len(e.Labels))
		for i, l := range e.Labels {
			labels[i] = l
		}
		return labels, true
	case "github.event.pull_request.body":
		if isPR {
			return e.PRBody, true
		}
		return nil, true
	case "github.event.pull_request.base.ref":
		if !isPR {
			return nil, true
		}
		if e.BaseRef != "" {
			return e.BaseRef, true
		}
		return DefaultBranch, true
	case "github.event.pull_request.base.sha":
		if isPR {
			return "base", true
		}
		return nil, true
	case "github.event.repository.default_branch":
		return DefaultBranch, true
	case "github.event.pull_request.head.repo.full_name":
		switch {
		case !isPR:
			return nil, true
		case e.Fork:
			return "fork/" + strings.SplitN(Repository, "/", 2)[1], true
		}
		return Repository, true
	case "github.repository":
		return Repository, true
	}
	if k, ok := strings.CutPrefix(p, "github.event.inputs."); ok {
		if val, ok := e.Inputs[k]; ok {
			return val, true
		}
		if e.Name == EventDispatch || e.Name == EventRelease {
			if wf := v.s.g.topRunDefaults(v.nr); wf != nil {
				if val, ok := wf[k]; ok {
					return val, true
				}
			}
		}
		return nil, true
	}
	return nil, true
}

// topRunDefaults are the input defaults of the triggered workflow a node's
// run belongs to (a called workflow's github.event is its caller's).
func (g *Graph) topRunDefaults(nr *nodeRun) map[string]string {
	run := nr.n.Run
	for run.Caller != "" {
		c := g.Node(run.Caller)
		if c == nil {
			break
		}
		run = c.Run
	}
	return run.Defaults
}

// skipReason says why an if: was false, from what it read.
func (s *scheduler) skipReason(nr *nodeRun, v *exprVars) string {
	n := nr.n
	if s.g.Event.Name == EventPullRequest && s.g.Event.action() == "closed" && strings.Contains(n.If, "closed") {
		return "the pull request is closed"
	}
	if len(n.Stages) > 0 && strings.Contains(n.If, "skipped_stages") {
		for _, d := range nr.needs {
			if d.n.Kind != KindPolicy {
				continue
			}
			var skipped []string
			if json.Unmarshal([]byte(d.outputs["skipped_stages"]), &skipped) == nil &&
				!slices.ContainsFunc(n.Stages, func(st policy.Stage) bool { return !slices.Contains(skipped, st.Name) }) {
				return "the policy skips it on this pull request (skipped_stages, rules §4)"
			}
		}
	}
	for _, d := range ancestors(nr) {
		if d.result != ResultSuccess && (strings.Contains(n.If, "needs."+d.n.ID+".") || !containsStatus(n.If)) {
			why := fmt.Sprintf("needs %s, which ended %s", d.n.ID, d.result)
			if d.n.ID == "stage-a-cpu" {
				why += " (the cross-stage fast-fail; the bypass-fastfail label lets it run)"
			}
			if !slices.Contains(nr.needs, d) {
				why = fmt.Sprintf("an ancestor, %s, ended %s (GitHub's success() covers every ancestor)", d.n.ID, d.result)
			}
			return why
		}
	}
	if len(v.read) > 0 {
		return "its if: is false with " + strings.Join(v.read, ", ")
	}
	return "its if: is false"
}

func containsStatus(cond string) bool {
	for _, f := range statusFuncs {
		if strings.Contains(cond, f+"()") {
			return true
		}
	}
	return false
}

var statusFuncs = []string{"always", "success", "failure", "cancelled"}

func (s *scheduler) notifyUnit(ur *unitRun) {
	if s.opt.Notify != nil {
		s.opt.Notify(s.unitReport(ur))
	}
}

func (s *scheduler) notifyNode(nr *nodeRun) {
	if s.opt.Notify != nil {
		s.opt.Notify(s.nodeReport(nr))
	}
}

func (s *scheduler) nodeReport(nr *nodeRun) JobReport {
	n := nr.n
	r := JobReport{Key: n.Key, Workflow: n.Workflow, Kind: n.Kind, State: nr.state, Result: nr.result, Reason: nr.reason, Needs: n.Needs, Required: n.Required,
		Attempt: s.opt.Attempt, Outputs: nr.outputs}
	if n.Kind == KindStage {
		st := n.Stages[0]
		r.Stage, r.Backend = st.Name, string(st.Backend)
		r.Shards = st.ShardsFor(s.cadence(nr))
		r.GPUs, _ = StageGPUs(st)
	}
	return r
}

func (s *scheduler) unitReport(ur *unitRun) JobReport {
	r := s.nodeReport(ur.node)
	r.State, r.Reason, r.ExitCode, r.CannotRun, r.Detail = ur.state, ur.out.Reason, ur.out.ExitCode, ur.out.CannotRun || ur.state == NotRun, ur.out.Detail
	r.Results = ur.out.Results
	r.Result = map[State]string{Passed: ResultSuccess, WouldRun: ResultSuccess, Failed: ResultFailure, NotRun: ResultFailure, Cancelled: ResultCancelled}[ur.state]
	r.GPUs, r.Devices = ur.u.GPUs, ur.u.Placement.Devices
	r.Host, r.Model, r.Substituted = ur.u.Placement.Host, ur.u.Model, ur.u.Placement.Substituted
	if ur.state == Queued && ur.waiting != "" {
		r.Reason = ur.waiting
	}
	if ur.state == WouldRun && !s.opt.Simulate {
		r.Devices = nil // a dry run runs one unit at a time: its devices say nothing
	}
	if ur.u.Stage != nil && ur.u.Shards > 1 {
		shard := ur.u.Shard
		r.Shard, r.Shards = &shard, ur.u.Shards
	}
	if ur.u.Batch > 0 {
		r.Stage, r.Backend = ur.u.Stage.Name, string(ur.u.Stage.Backend)
		r.Batch, r.File, r.RunsOn = ur.u.Batch, ur.u.File, ur.u.RunsOn
	}
	if ur.started && s.clocked() {
		t := ur.start
		r.Start = &t
		r.Duration = ur.dur.Seconds()
	}
	r.Outputs = ur.out.Outputs
	if k := ur.kept; k != nil {
		r.Attempt, r.Reused, r.Start, r.Duration = k.Attempt, true, k.Start, k.Duration
	}
	return r
}

// Unit names a job, or one shard or pool file of it, the same way in every
// attempt of a run: the key Options.Previous is read by.
func (j JobReport) Unit() string { return unitName(j.Key, j.Shard, j.Batch, j.File) }

// Name is the unit's name, as its JobReport.Unit gives it.
func (u *Unit) Name() string {
	var shard *int
	if u.Stage != nil && u.Shards > 1 {
		shard = &u.Shard
	}
	return unitName(u.Node.Key, shard, u.Batch, u.File)
}

func unitName(key string, shard *int, batch int, file string) string {
	if shard != nil {
		key += "#" + strconv.Itoa(*shard)
	}
	if batch > 0 {
		key += "@" + strconv.Itoa(batch) + ":" + file
	}
	return key
}

// report lists every job in graph order, a stage job's shards one by one.
func (s *scheduler) report() *Report {
	r := &Report{Event: s.g.Event, Attempt: s.opt.Attempt, Host: s.opt.Host.String(), Cancelled: s.cancelled}
	for _, h := range s.opt.Hosts {
		r.Hosts = append(r.Hosts, HostReport{Name: h.Name, GPUs: h.String(), Engine: h.Engine})
	}
	for _, nr := range s.nodes {
		if len(nr.units) == 0 || nr.n.Kind != KindStage && nr.n.Kind != KindPoolRun {
			jr := s.nodeReport(nr)
			if len(nr.units) == 1 {
				u := s.unitReport(nr.units[0])
				jr.Start, jr.Duration, jr.ExitCode, jr.Detail, jr.CannotRun = u.Start, u.Duration, u.ExitCode, u.Detail, u.CannotRun
				jr.Attempt, jr.Reused = u.Attempt, u.Reused
				if jr.Reason == "" {
					jr.Reason = u.Reason
				}
			}
			r.Jobs = append(r.Jobs, jr)
			continue
		}
		for _, ur := range nr.units {
			r.Jobs = append(r.Jobs, s.unitReport(ur))
		}
	}
	r.fill()
	if s.clocked() {
		t0 := s.t0
		r.Start, r.Timeline = &t0, s.timeline()
	}
	return r
}
