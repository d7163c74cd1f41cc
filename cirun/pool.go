package cirun

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/policy"
)

// The B200 pool (rules §11.8) as the checkout's workflows lay it out: the
// stage job (stage-c-b200) calls a workflow whose planner job writes a
// matrix of batches and has_tests; its batch job, gated on has_tests, runs
// each batch (max-parallel 1) by calling a batch workflow whose matrix is
// the batch's files, each one run_suite.py --test-file run on runs_on
// ["b200","<n>gpu"] with num_gpus GPUs. The graph reads all of it from the
// workflows: the planner's outputs come from its executor, the rest is
// GitHub's expression evaluation.

// maxPoolEntries bounds a pool matrix: GitHub runs at most 256 jobs of one.
const maxPoolEntries = 256

// expandPool makes the pool's batch job's units: one per file of every
// batch, in the planner's order. Batches start batchParallel at a time, a
// batch's files together as the host's GPUs allow.
func (s *scheduler) expandPool(nr *nodeRun, vars *exprVars) {
	n := nr.n
	nr.state = Running
	fail := func(format string, args ...any) {
		ur := &unitRun{u: Unit{Node: n, Shards: 1, Needs: s.needs(nr)}, state: NotRun, node: nr,
			out: Outcome{Result: ResultFailure, CannotRun: true, Reason: fmt.Sprintf("%s:%d: job %s: ", n.Workflow, n.Line, n.ID) + fmt.Sprintf(format, args...)}}
		nr.units = append(nr.units, ur)
		s.notifyUnit(ur)
	}
	if n.MaxParallel != "" {
		mp, err := policy.EvalString(n.MaxParallel, vars.get)
		v, cerr := strconv.Atoi(strings.TrimSpace(mp))
		if err != nil || cerr != nil || v < 1 {
			fail("max-parallel %q is not a positive number", n.MaxParallel)
			return
		}
		nr.batchParallel = v
	}
	batches, err := includeOf(n.MatrixExpr, vars)
	if err != nil {
		fail("its matrix: %v", err)
		return
	}
	var stages []policy.Stage
	if nr.parent != nil {
		stages = nr.parent.n.Stages
	}
	job := n.Batch
	var units []*unitRun
	for i, b := range batches {
		batch := i + 1
		if f, ok := b["batch"].(float64); ok && f >= 1 {
			batch = int(f)
		}
		bv := s.vars(nr, -1, 1)
		bv.matrix = b
		inputs := map[string]any{}
		for k, v := range n.With {
			ev, err := policy.EvalString(v, bv.get)
			if err != nil {
				fail("batch %d: cannot evaluate input %s: %v", batch, k, err)
				return
			}
			inputs[k] = typedInput(n.BatchTypes[k], ev)
		}
		files, err := includeOf(job.MatrixExpr, &exprVars{s: s, nr: nr, shard: -1, total: 1, inputs: inputs})
		if err != nil {
			fail("batch %d: the matrix of job %s: %v", batch, job.ID, err)
			return
		}
		if len(units)+len(files) > maxPoolEntries {
			// b200_plan.py asserts the same bound on the whole plan.
			fail("its batches have more than %d files; the pool plans at most %d", maxPoolEntries, maxPoolEntries)
			return
		}
		for _, f := range files {
			units = append(units, s.poolUnit(nr, stages, batch, inputs, f))
		}
	}
	for i, ur := range units {
		ur.u.Shard, ur.u.Shards = i, len(units)
		nr.units = append(nr.units, ur)
		s.notifyUnit(ur)
	}
}

// poolUnit is one file of a batch: the batch job's inputs evaluated with
// the file's matrix entry.
func (s *scheduler) poolUnit(nr *nodeRun, stages []policy.Stage, batch int, inputs map[string]any, entry map[string]any) *unitRun {
	n, job := nr.n, nr.n.Batch
	fv := &exprVars{s: s, nr: nr, shard: -1, total: 1, inputs: inputs, matrix: entry}
	file, _ := entry["file"].(string)
	u := Unit{Node: n, Shards: 1, Needs: s.needs(nr), Batch: batch, File: file, With: map[string]string{}}
	ur := &unitRun{u: u, state: Queued, node: nr}
	cannot := func(format string, args ...any) *unitRun {
		ur.state, ur.out = NotRun, Outcome{Result: ResultFailure, CannotRun: true, Reason: fmt.Sprintf(format, args...)}
		if ur.u.Stage == nil {
			ur.u.Stage = &policy.Stage{Name: fmt.Sprint(entry["suite"]), Backend: policy.CUDA}
		}
		return ur
	}
	for k, v := range job.With {
		ev, err := policy.EvalString(v, fv.get)
		if err != nil {
			return cannot("cannot evaluate input %s of job %s (line %d of the batch workflow) for %s: %v", k, job.ID, job.Line, file, err)
		}
		ur.u.With[k] = ev
	}
	ur.u.Command = strings.Join(strings.Fields(ur.u.With["execute_command"]), " ")
	delete(ur.u.With, "execute_command")
	ur.u.Work.Image = s.image(ur.u.With["container_image"])
	suite, _ := entry["suite"].(string)
	var stage *policy.Stage
	for _, st := range stages {
		if st.Name == suite {
			st := st
			stage = &st
		}
	}
	if stage == nil {
		return cannot("the pool planned %s on suite %q, which is not a suite of job %s", file, suite, nr.parent.n.ID)
	}
	ur.u.Stage = stage
	if rs := ur.u.With["runs_on"]; rs != "" {
		if err := json.Unmarshal([]byte(rs), &ur.u.RunsOn); err != nil {
			return cannot("runs_on %q of %s is not a JSON list of runner labels", rs, file)
		}
		stage.RunsOn = ur.u.RunsOn
	}
	gpus, err := StageGPUs(*stage)
	if ng := ur.u.With["num_gpus"]; ng != "" {
		gpus, err = strconv.Atoi(ng)
		if err == nil && (gpus < 1 || gpus > 64) {
			err = fmt.Errorf("out of range")
		}
		if err != nil {
			err = fmt.Errorf("num_gpus %q of %s is not a GPU count", ng, file)
		}
	}
	ur.u.GPUs = gpus
	if err == nil {
		err = s.setModel(&ur.u)
	}
	ur.u.Work.PoolFile = &policy.PoolJob{File: file, Suite: stage.Name, NumGPUs: gpus, RunsOn: ur.u.RunsOn}
	var serr error
	ur.u.Work.Suite, serr = poolSuiteOf(ur.u.Command, file)
	switch {
	case err != nil:
		return cannot("%v", err)
	case s.stageExcluded(*stage):
		ur.state, ur.out = Excluded, Outcome{Result: ResultSuccess, Reason: "left out by --only/--skip"}
	case !s.place.fits(s.need(&ur.u)):
		return cannot("%s", s.place.why(s.need(&ur.u)))
	case serr != nil:
		return cannot("job %s: %v", n.ID, serr)
	}
	return ur
}

// includeOf is a matrix of include: entries, as an expression gives it.
func includeOf(expr string, vars *exprVars) ([]map[string]any, error) {
	text, err := policy.EvalString(expr, vars.get)
	if err != nil {
		return nil, err
	}
	var m struct {
		Include []map[string]any `json:"include"`
	}
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("%s is not a matrix of include: entries: %v", expr, err)
	}
	if len(m.Include) > maxPoolEntries {
		return nil, fmt.Errorf("%s has %d entries; GitHub runs at most %d jobs of a matrix", expr, len(m.Include), maxPoolEntries)
	}
	return m.Include, nil
}

// poolSuiteOf reads a pool file's evaluated run_suite.py command, which must
// run the file the planner gave it.
func poolSuiteOf(cmd, file string) (*RunSuiteArgs, error) {
	args, err := ParseRunSuite(cmd)
	if err == nil && args.TestFile != policy.ShellQuote(file) {
		err = fmt.Errorf("its command runs --test-file %q, not the planned %s: %q", args.TestFile, file, cmd)
	}
	if err != nil {
		return nil, err
	}
	return &args, nil
}
