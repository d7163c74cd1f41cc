// Package cirun runs the whole CI of one event: it holds the jobs the
// checkout's PR workflows run as data (rules §12: their needs and if:, the
// shard matrices of the stage jobs with their GPUs) and schedules them on a
// host or a fleet through an injected executor. It reads no file, clock or
// network itself: the use case hands it the parsed workflows and the
// roster, and runs the shards.
package cirun

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/policy"
)

// Event names a graph starts from. Release is release-branch-cut.yml's
// workflow_dispatch, whose jobs call the PR workflows (rules §12.5).
const (
	EventPullRequest = policy.EventPullRequest
	EventSchedule    = policy.EventSchedule
	EventDispatch    = policy.EventWorkflowDispatch
	EventRelease     = "release"
)

// Event is the trigger facts of one run of the graph.
type Event struct {
	// Name is pull_request, schedule, workflow_dispatch or release.
	Name string
	// Action is a pull request's activity type ("" = synchronize).
	Action string
	// Schedule is the cron of a scheduled run.
	Schedule string
	// Labels are the pull request's label names.
	Labels []string
	// PRNumber, PRBody, Fork and BaseRef are the pull request's facts
	// (BaseRef "" = the default branch).
	PRNumber int
	PRBody   string
	Fork     bool
	BaseRef  string
	// Inputs are the workflow_dispatch inputs given (the release branch cut's
	// are branch_name).
	Inputs map[string]string
	// ReleaseOutputs stand in for release-branch-cut's cut-release-branch
	// job: its outputs (branch_name, ci_image_tag) as the lockfile gives them.
	ReleaseOutputs map[string]string
}

func (e Event) action() string {
	if e.Action == "" {
		return "synchronize"
	}
	return e.Action
}

// Repository is the base repository Miles' workflows compare against.
const Repository = "radixark/miles"

// DefaultBranch is the repository's default branch.
const DefaultBranch = "main"

// Kind is what miles-ci does for a job.
type Kind string

// The kinds of job. The resolvers are miles-ci's own use cases, not
// containers; a stage job runs its shards' containers.
const (
	KindPolicy  Kind = "policy"      // resolve-ci-policy: policy
	KindImage   Kind = "image"       // resolve-ci-image: image
	KindDeps    Kind = "deps"        // resolve-ci-deps: deps
	KindPRImage Kind = "pr-image"    // docker-build: _build-pr-ci-image.yml (rules §12.3)
	KindStage   Kind = "stage"       // a stage job: one unit per shard
	KindCall    Kind = "call"        // a job that calls a PR workflow (release-branch-cut)
	KindRelease Kind = "release-cut" // cut-release-branch: the lockfile stands in
	KindOther   Kind = "not-modelled"
	// The B200 pool (rules §11.8): its planner job (b200_plan.py, a use
	// case) and its batches, one unit per planned file.
	KindPoolPlan Kind = "pool-plan"
	KindPoolRun  Kind = "pool"
)

// classifier is one row of how a job is recognised, first match wins; each
// reads what the job does, never its id (testdata/miles names them policy,
// image and deps).
type classifier struct {
	kind  Kind
	match func(j WorkflowJob, roster []policy.Stage) bool
}

var classifiers = []classifier{
	{KindCall, func(j WorkflowJob, _ []policy.Stage) bool { return isPRWorkflow(j.Uses) }},
	{KindPRImage, func(j WorkflowJob, _ []policy.Stage) bool { return path.Base(j.Uses) == "_build-pr-ci-image.yml" }},
	{KindStage, func(j WorkflowJob, r []policy.Stage) bool {
		return slices.ContainsFunc(r, func(s policy.Stage) bool { return s.Job == j.ID })
	}},
	{KindPoolPlan, func(j WorkflowJob, _ []policy.Stage) bool {
		return slices.ContainsFunc(j.Runs, func(r string) bool { return strings.Contains(r, poolPlanner) })
	}},
	// A called workflow run once per entry of a planner job's matrix output.
	{KindPoolRun, func(j WorkflowJob, _ []policy.Stage) bool {
		return j.Uses != "" && strings.Contains(j.MatrixExpr, ".outputs.matrix")
	}},
	{KindPolicy, func(j WorkflowJob, _ []policy.Stage) bool {
		return slices.ContainsFunc(j.Runs, func(r string) bool { return strings.Contains(r, "ci_policy") })
	}},
	{KindImage, func(j WorkflowJob, _ []policy.Stage) bool { return writesOutput(j, "container_image") }},
	{KindDeps, func(j WorkflowJob, _ []policy.Stage) bool { return writesOutput(j, "skip_dependency_install") }},
	{KindRelease, func(j WorkflowJob, _ []policy.Stage) bool { return slices.Contains(j.Outputs, "ci_image_tag") }},
}

// poolPlanner is the module the B200 pool's planner job runs.
const poolPlanner = "tests.ci.b200_plan"

// writesOutput reports a job that declares an output or writes it to
// $GITHUB_OUTPUT in a step.
func writesOutput(j WorkflowJob, name string) bool {
	return slices.Contains(j.Outputs, name) || slices.ContainsFunc(j.Runs, func(r string) bool { return strings.Contains(r, name+"=") })
}

// PRWorkflows are the workflows a PR event starts, in order.
var PRWorkflows = []string{policy.PRTestWorkflow, policy.PRTestROCmWorkflow}

// ReleaseWorkflow is the release branch cut that calls the PR workflows.
const ReleaseWorkflow = ".github/workflows/release-branch-cut.yml"

func isPRWorkflow(uses string) bool {
	return slices.Contains(PRWorkflows, strings.TrimPrefix(uses, "./"))
}

// Node is one job of the graph.
type Node struct {
	// Key names the job uniquely: RUN/JOB, RUN the workflow's name
	// (pr-test) or the calling job (run-tests-cuda).
	Key string `json:"job"`
	// Workflow is the file the job is in; Line its line.
	Workflow string `json:"workflow"`
	Line     int    `json:"line"`
	// ID is the job id in its workflow.
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// Needs are the keys of the jobs it waits for.
	Needs []string `json:"needs"`
	// If is the job's if: as written.
	If string `json:"if,omitempty"`
	// Parent is the key of the calling job of a called workflow's job.
	Parent string `json:"parent,omitempty"`
	// Stages are the roster rows of a stage job (one, or a pool's several).
	Stages []policy.Stage `json:"-"`
	// FailFast is the matrix fail-fast (GitHub's default true).
	FailFast bool `json:"fail_fast"`
	// With are the inputs of a called workflow, evaluated when the job starts.
	With map[string]string `json:"-"`
	// Run is the workflow run the job belongs to.
	Run *Run `json:"-"`
	// NotModelled says why miles-ci does not run the job ("" = it does).
	NotModelled string `json:"not_modelled,omitempty"`
	// Required marks a job whose not running fails the verdict (a test
	// stage miles-ci cannot run); bookkeeping jobs are not required.
	Required bool `json:"-"`
	// Script is a pool planner's run: step (its b200_plan command line).
	Script string `json:"-"`
	// MatrixExpr and MaxParallel are a pool job's strategy, as written.
	MatrixExpr  string `json:"-"`
	MaxParallel string `json:"-"`
	// Batch is the job of the workflow a pool job calls per batch: its
	// matrix is the batch's files, its execute_command one file's run.
	Batch *WorkflowJob `json:"-"`
	// BatchTypes are that workflow's declared input types.
	BatchTypes map[string]string `json:"-"`
}

// Run is one run of a workflow file: a triggered one, or one a job calls.
type Run struct {
	// Name is the workflow's short name, or the calling job's id.
	Name string
	// File is the workflow file.
	File string
	// Inputs are the call's inputs (cadence, ref, image_tag), evaluated.
	Inputs map[string]string
	// Defaults are the declared inputs' defaults.
	Defaults map[string]string
	// Types are the declared inputs' types (boolean inputs read as booleans).
	Types map[string]string
	// Caller is the calling job's key ("" for a triggered run).
	Caller string
}

// Graph is every job one event would run, in workflow and file order.
type Graph struct {
	Event Event
	Nodes []*Node
}

// Node finds a node by key.
func (g *Graph) Node(key string) *Node {
	for _, n := range g.Nodes {
		if n.Key == key {
			return n
		}
	}
	return nil
}

// Request is what Build needs.
type Request struct {
	Event Event
	// Workflows are the checkout's workflows by repo-relative file (a file
	// it does not have is absent).
	Workflows map[string]*Workflow
	// Roster is the checkout's stage roster (policy.Tables.Roster).
	Roster []policy.Stage
}

// poolReason says why a stage job that plans and splits its suites itself
// is not run: its called workflow, not run_suite.py's shards, decides what
// runs where (Miles' B200 pool, rules §11.8).
func poolReason(j WorkflowJob) string {
	if j.Uses != "" && !strings.Contains(j.With["execute_command"], "run_suite.py") {
		return fmt.Sprintf("calls %s, which plans and batches its suites itself (the B200 pool, rules §11.8); miles-ci does not run it yet", j.Uses)
	}
	return ""
}

// isPoolCall reports a stage job whose called workflow plans and batches
// its suites itself (poolReason).
func isPoolCall(j WorkflowJob, roster []policy.Stage) bool {
	return poolReason(j) != "" && slices.ContainsFunc(roster, func(s policy.Stage) bool { return s.Job == j.ID })
}

// poolWorkflow reports a called workflow miles-ci runs as the B200 pool: a
// planner job (b200_plan.py) and a job that runs the planner's batches.
func poolWorkflow(wf *Workflow, workflows map[string]*Workflow) bool {
	if wf == nil {
		return false
	}
	plan, run := false, false
	for _, j := range wf.Jobs {
		kind, _, _ := classify(j, nil, workflows)
		plan, run = plan || kind == KindPoolPlan, run || kind == KindPoolRun
	}
	return plan && run
}

// batchJob is the job of a pool's batch workflow that runs one file per
// matrix entry (nil when it has none).
func batchJob(wf *Workflow) *WorkflowJob {
	if wf == nil {
		return nil
	}
	for i, j := range wf.Jobs {
		if j.MatrixExpr != "" && strings.Contains(j.With["execute_command"], "run_suite.py") {
			return &wf.Jobs[i]
		}
	}
	return nil
}

// poolScript is the run: step that calls the planner.
func poolScript(runs []string) string {
	for _, r := range runs {
		if strings.Contains(r, poolPlanner) {
			return r
		}
	}
	return ""
}

// Build lays out the jobs an event starts. A workflow the event does not
// start has no node; a job miles-ci does not model has a node that says so.
func Build(req Request) (*Graph, error) {
	g := &Graph{Event: req.Event}
	if req.Event.Name == EventRelease {
		wf := req.Workflows[ReleaseWorkflow]
		if wf == nil {
			return nil, fmt.Errorf("a release run needs %s, which the checkout does not have; release CI calls the PR workflows from it", ReleaseWorkflow)
		}
		if !wf.On.Dispatch {
			return nil, fmt.Errorf("%s has no workflow_dispatch trigger, so no release run starts from it", ReleaseWorkflow)
		}
		if err := g.add(req, wf, &Run{Name: shortName(wf.File), File: wf.File, Inputs: map[string]string{}, Defaults: wf.On.Inputs}); err != nil {
			return nil, err
		}
		return g, nil
	}
	started := 0
	for _, f := range PRWorkflows {
		wf := req.Workflows[f]
		if wf == nil || !wf.On.Runs(req.Event) {
			continue
		}
		started++
		if err := g.add(req, wf, &Run{Name: shortName(f), File: f, Inputs: map[string]string{}, Defaults: wf.On.Inputs}); err != nil {
			return nil, err
		}
	}
	if started == 0 && req.Event.Name != EventPullRequest {
		return nil, fmt.Errorf("no PR workflow of the checkout runs on %s; check the event (and its cron) against the on: triggers of the workflows", describeEvent(req.Event))
	}
	return g, nil
}

func describeEvent(e Event) string {
	if e.Name == EventSchedule {
		return fmt.Sprintf("schedule %q", e.Schedule)
	}
	return e.Name
}

func shortName(file string) string {
	return strings.TrimSuffix(strings.TrimSuffix(path.Base(file), ".yml"), ".yaml")
}

// add adds the jobs of one workflow run, and those of the workflows its
// jobs call.
func (g *Graph) add(req Request, wf *Workflow, run *Run) error {
	prefix := run.Name + "/"
	for _, j := range wf.Jobs {
		n := &Node{Key: prefix + j.ID, Workflow: wf.File, Line: j.Line, ID: j.ID, If: j.If, FailFast: j.FailFast, With: j.With, Run: run, Parent: run.Caller, Needs: []string{}}
		for _, need := range j.Needs {
			n.Needs = append(n.Needs, prefix+need)
		}
		n.Kind, n.NotModelled, n.Required = classify(j, req.Roster, req.Workflows)
		switch n.Kind {
		case KindPoolPlan:
			n.Script = poolScript(j.Runs)
		case KindPoolRun:
			n.MatrixExpr, n.MaxParallel = j.MatrixExpr, j.MaxParallel
			bw := req.Workflows[strings.TrimPrefix(j.Uses, "./")]
			n.Batch, n.BatchTypes = batchJob(bw), bw.On.InputTypes
		}
		if n.Kind == KindStage || isPoolCall(j, req.Roster) {
			for _, st := range req.Roster {
				if st.Job == j.ID && !st.External {
					n.Stages = append(n.Stages, st)
				}
			}
		}
		g.Nodes = append(g.Nodes, n)
		if n.Kind == KindCall {
			called := req.Workflows[strings.TrimPrefix(j.Uses, "./")]
			if called == nil {
				n.Kind, n.NotModelled, n.Required = KindOther, fmt.Sprintf("calls %s, which the checkout does not have", j.Uses), true
				continue
			}
			if !called.On.Call {
				return fmt.Errorf("%s:%d: job %s calls %s, which has no workflow_call trigger; GitHub refuses the call", wf.File, j.Line, j.ID, j.Uses)
			}
			if err := g.add(req, called, &Run{Name: j.ID, File: called.File, Inputs: map[string]string{}, Defaults: called.On.Inputs, Types: called.On.InputTypes, Caller: n.Key}); err != nil {
				return err
			}
		}
	}
	return nil
}

// classify is what miles-ci does for a job, and why not when it does not
// run it (required: a test stage it cannot run, which fails the verdict).
func classify(j WorkflowJob, roster []policy.Stage, workflows map[string]*Workflow) (kind Kind, notModelled string, required bool) {
	kind = KindOther
	for _, c := range classifiers {
		if c.match(j, roster) {
			kind = c.kind
			break
		}
	}
	switch kind {
	case KindStage:
		if why := poolReason(j); why != "" {
			if isPoolCall(j, roster) && poolWorkflow(workflows[strings.TrimPrefix(j.Uses, "./")], workflows) {
				return KindCall, "", false
			}
			return KindOther, why, true
		}
	case KindPoolRun:
		if batchJob(workflows[strings.TrimPrefix(j.Uses, "./")]) == nil {
			return KindOther, fmt.Sprintf("calls %s per batch, and miles-ci finds no job there whose matrix runs one run_suite.py file each", j.Uses), true
		}
	case KindOther:
		return kind, otherReason(j), false
	}
	return kind, "", false
}

// Gap is a job of the checkout's CI workflows that miles-ci does not run.
type Gap struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Job      string `json:"job"`
	Reason   string `json:"reason"`
	Required bool   `json:"required"`
}

// String is "FILE:LINE: not-modelled: job J REASON".
func (g Gap) String() string {
	return fmt.Sprintf("%s:%d: not-modelled: job %s %s", g.File, g.Line, g.Job, g.Reason)
}

// Gaps lists the jobs of the PR workflows and the release branch cut that
// miles-ci does not run, in file and job order, so that lint and the plan
// name them instead of dropping them.
func Gaps(workflows map[string]*Workflow, roster []policy.Stage) []Gap {
	var out []Gap
	for _, f := range append(slices.Clone(PRWorkflows), ReleaseWorkflow) {
		wf := workflows[f]
		if wf == nil {
			continue
		}
		for _, j := range wf.Jobs {
			if kind, why, req := classify(j, roster, workflows); kind == KindOther {
				out = append(out, Gap{File: f, Line: j.Line, Job: j.ID, Reason: why, Required: req})
			}
		}
	}
	return out
}

// otherReason says what a job that miles-ci does not model does.
func otherReason(j WorkflowJob) string {
	switch {
	case j.Uses != "":
		return fmt.Sprintf("calls %s, which miles-ci does not run", j.Uses)
	case len(j.Runs) > 0:
		return "runs its own steps on GitHub (miles-ci does not run them)"
	}
	return "has no step miles-ci runs"
}

// gpuLabel is a runner label that names a GPU count, e.g. 4gpu.
var gpuLabel = regexp.MustCompile(`^([0-9]+)gpu$`)

// StageGPUs is the number of GPUs a shard of a stage takes: its runner's
// Ngpu label (rules §1), 0 for CPU stages.
func StageGPUs(st policy.Stage) (int, error) {
	if p, ok := policy.Profile(st.Backend); ok && p.VisibleDevices == "" {
		return 0, nil
	}
	for _, l := range st.RunsOn {
		if m := gpuLabel.FindStringSubmatch(l); m != nil {
			n, err := strconv.Atoi(m[1])
			if err == nil && n > 0 && n <= 64 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("stage %s runs on %v, which names no GPU count (a label such as 4gpu); miles-ci cannot tell how many GPUs a shard takes", st.Name, st.RunsOn)
}
