package cirun

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/yamlnode"
	"gopkg.in/yaml.v3"
)

// Workflow is what the graph reads of one workflow file: its triggers and
// its jobs in file order. The stage facts (suite, shards, runners,
// max-parallel by cadence) come from the roster policy reads from the same
// files; this is the skeleton around them.
type Workflow struct {
	// File is the repo-relative path, e.g. .github/workflows/pr-test.yml.
	File string
	// On are the events that start the workflow.
	On Triggers
	// Jobs are the workflow's jobs, in file order.
	Jobs []WorkflowJob
}

// Triggers are the on: events of a workflow.
type Triggers struct {
	// PullRequest is set when on: has pull_request; PRTypes are its types
	// (nil: GitHub's default opened, synchronize, reopened).
	PullRequest bool
	PRTypes     []string
	// Crons are the schedule crons.
	Crons []string
	// Dispatch and Call are set for workflow_dispatch and workflow_call.
	Dispatch, Call bool
	// Inputs are the declared inputs' defaults (dispatch and call together);
	// InputTypes their declared types (boolean, number, string).
	Inputs     map[string]string
	InputTypes map[string]string
}

// defaultPRTypes are the pull_request activity types GitHub runs a workflow
// for when it names none.
var defaultPRTypes = []string{"opened", "synchronize", "reopened"}

// Runs reports whether an event starts the workflow.
func (t Triggers) Runs(e Event) bool {
	switch e.Name {
	case EventPullRequest:
		types := t.PRTypes
		if types == nil {
			types = defaultPRTypes
		}
		return t.PullRequest && contains(types, e.action())
	case EventSchedule:
		return contains(t.Crons, e.Schedule)
	case EventDispatch:
		return t.Dispatch
	}
	return false
}

// WorkflowJob is one job as the graph needs it.
type WorkflowJob struct {
	ID   string
	Line int
	// If is the job's if: ("" = none).
	If string
	// Needs are the job ids it waits for.
	Needs []string
	// Uses is the called workflow of a reusable-workflow job ("" = steps).
	Uses string
	// With are the called workflow's inputs, as written (expressions kept).
	With map[string]string
	// Outputs are the names of the job's outputs.
	Outputs []string
	// FailFast is strategy.fail-fast (GitHub's default true when unset).
	FailFast bool
	// Matrix is set when the job has a strategy.matrix; MatrixExpr is the
	// matrix when it is one expression (fromJSON(...) of a plan's output),
	// MaxParallel strategy.max-parallel as written.
	Matrix      bool
	MatrixExpr  string
	MaxParallel string
	// Runs are the run: scripts of its steps.
	Runs []string
}

// maxWorkflowJobs bounds a workflow: GitHub allows 256 jobs in one.
const maxWorkflowJobs = 256

// ParseWorkflow reads a workflow file's skeleton. name is the file's
// repo-relative path, used in errors.
func ParseWorkflow(name string, data []byte) (*Workflow, error) {
	var doc yaml.Node
	return ParseWorkflowDoc(name, &doc, yaml.Unmarshal(data, &doc))
}

// ParseWorkflowDoc is ParseWorkflow of a file already decoded (the one read
// of each workflow file, policy.Tables.Workflow): doc is its YAML document,
// invalid why it is not valid YAML. doc is only read.
func ParseWorkflowDoc(name string, doc *yaml.Node, invalid error) (*Workflow, error) {
	if invalid != nil {
		return nil, fmt.Errorf("%s is not valid YAML: %s; fix it so that GitHub can load the workflow", name, strings.TrimPrefix(invalid.Error(), "yaml: "))
	}
	wf := &Workflow{File: name, On: Triggers{Inputs: map[string]string{}, InputTypes: map[string]string{}}}
	if doc.Kind == 0 {
		return wf, nil
	}
	top := deref(doc)
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = deref(top.Content[0])
	}
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s is not a workflow: its top level must be a mapping that holds jobs", name)
	}
	wf.On = readTriggers(get(top, "on"))
	jobs := get(top, "jobs")
	if jobs == nil {
		return wf, nil
	}
	if jobs.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: jobs must be a mapping of job id to job", name, jobs.Line)
	}
	if len(jobs.Content)/2 > maxWorkflowJobs {
		return nil, fmt.Errorf("%s has more than %d jobs; GitHub runs at most %d jobs in a workflow", name, maxWorkflowJobs, maxWorkflowJobs)
	}
	for i := 0; i+1 < len(jobs.Content); i += 2 {
		k, v := jobs.Content[i], deref(jobs.Content[i+1])
		if v.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: job %s must be a mapping", name, k.Line, k.Value)
		}
		j := WorkflowJob{ID: k.Value, Line: k.Line, FailFast: true, With: map[string]string{}}
		j.If, _ = scalar(get(v, "if"))
		j.Needs = strList(get(v, "needs"))
		j.Uses, _ = scalar(get(v, "uses"))
		if w := get(v, "with"); w != nil && w.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(w.Content); i += 2 {
				val, _ := scalar(w.Content[i+1])
				j.With[w.Content[i].Value] = val
			}
		}
		if o := get(v, "outputs"); o != nil && o.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(o.Content); i += 2 {
				j.Outputs = append(j.Outputs, o.Content[i].Value)
			}
		}
		if s := get(v, "strategy"); s != nil {
			j.Matrix = get(s, "matrix") != nil
			j.MatrixExpr, _ = scalar(get(s, "matrix"))
			j.MaxParallel, _ = scalar(get(s, "max-parallel"))
			if ff, ok := scalar(get(s, "fail-fast")); ok {
				j.FailFast = ff != "false"
			}
		}
		if steps := get(v, "steps"); steps != nil && steps.Kind == yaml.SequenceNode {
			for _, st := range steps.Content {
				if r, ok := scalar(get(deref(st), "run")); ok {
					j.Runs = append(j.Runs, r)
				}
			}
		}
		for _, n := range j.Needs {
			if n == j.ID {
				return nil, fmt.Errorf("%s:%d: job %s needs itself", name, k.Line, j.ID)
			}
		}
		wf.Jobs = append(wf.Jobs, j)
	}
	for _, j := range wf.Jobs {
		for _, n := range j.Needs {
			if wf.job(n) == nil {
				return nil, fmt.Errorf("%s:%d: job %s needs %s, which the workflow has no job of; GitHub refuses such a workflow", name, j.Line, j.ID, n)
			}
		}
	}
	if err := wf.checkCycles(); err != nil {
		return nil, err
	}
	return wf, nil
}

// job finds a job by id.
func (w *Workflow) job(id string) *WorkflowJob {
	for i := range w.Jobs {
		if w.Jobs[i].ID == id {
			return &w.Jobs[i]
		}
	}
	return nil
}

// checkCycles refuses a needs cycle, as GitHub does.
func (w *Workflow) checkCycles() error {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(id string) error
	visit = func(id string) error {
		switch state[id] {
		case 1:
			return fmt.Errorf("%s: job %s is in a needs cycle; GitHub refuses such a workflow", w.File, id)
		case 2:
			return nil
		}
		state[id] = 1
		for _, n := range w.job(id).Needs {
			if err := visit(n); err != nil {
				return err
			}
		}
		state[id] = 2
		return nil
	}
	for _, j := range w.Jobs {
		if err := visit(j.ID); err != nil {
			return err
		}
	}
	return nil
}

func readTriggers(on *yaml.Node) Triggers {
	t := Triggers{Inputs: map[string]string{}, InputTypes: map[string]string{}}
	on = deref(on)
	if on == nil {
		return t
	}
	// on: pull_request, or on: [pull_request, schedule].
	for _, ev := range strList(on) {
		t.set(ev, nil)
	}
	if on.Kind != yaml.MappingNode {
		return t
	}
	for i := 0; i+1 < len(on.Content); i += 2 {
		t.set(on.Content[i].Value, deref(on.Content[i+1]))
	}
	return t
}

func (t *Triggers) set(event string, body *yaml.Node) {
	switch event {
	case "pull_request":
		t.PullRequest = true
		if types := get(body, "types"); types != nil {
			t.PRTypes = strList(types)
			if t.PRTypes == nil {
				t.PRTypes = []string{}
			}
		}
	case "schedule":
		if body != nil && body.Kind == yaml.SequenceNode {
			for _, item := range body.Content {
				if c, ok := scalar(get(deref(item), "cron")); ok {
					t.Crons = append(t.Crons, c)
				}
			}
		}
	case "workflow_dispatch", "workflow_call":
		if event == "workflow_dispatch" {
			t.Dispatch = true
		} else {
			t.Call = true
		}
		if in := get(body, "inputs"); in != nil && in.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(in.Content); i += 2 {
				if _, seen := t.Inputs[in.Content[i].Value]; !seen {
					t.Inputs[in.Content[i].Value], _ = scalar(get(deref(in.Content[i+1]), "default"))
					t.InputTypes[in.Content[i].Value], _ = scalar(get(deref(in.Content[i+1]), "type"))
				}
			}
		}
	}
}

// The YAML accessors the policy reader uses too.
var (
	deref   = yamlnode.Deref
	get     = yamlnode.Get
	scalar  = yamlnode.Scalar
	strList = yamlnode.StrList
)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
