package usecase

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
)

// PoolInputs are what `plan --pool` is given: one b200_plan.py invocation
// on a checkout of the B200 pool line (rules §11.8).
type PoolInputs struct {
	// Repo is the Miles checkout; Shown names it in messages (see LoadTables).
	Repo, Shown string
	Request     policy.PoolRequest
}

// PoolAnswer is the pool's plan: its jobs, its batches and the matrix
// b200_plan.py writes to $GITHUB_OUTPUT.
type PoolAnswer struct {
	Plan     policy.PoolPlan
	Messages []Message
}

// PlanPool answers `plan --pool`. Like b200_plan.py, which collects every
// test file of the snapshot, a fault anywhere in the registry fails it.
func PlanPool(in PoolInputs) (PoolAnswer, error) {
	var ans PoolAnswer
	tables, reg, msgs, err := loadRegistry(in.Repo, in.Shown)
	ans.Messages = msgs
	if err != nil {
		return ans, err
	}
	if pool := tables.PoolSuites(); len(pool) > 0 {
		for _, s := range in.Request.Suites {
			if !slices.Contains(pool, s) {
				return ans, &UnknownError{Input: "--suites", What: "B200 pool suite", Name: s, Known: pool}
			}
		}
	}
	ans.Messages = append(ans.Messages, LabelWarnings(tables, in.Request.Labels, "--labels")...)
	ans.Plan, err = policy.PlanPool(reg, in.Request)
	return ans, err
}

// poolOfSuite is the pool plan of one B200 suite for `plan --suite` (nil
// for any other suite, a shard, or a checkout without the pool): the jobs
// and batches that suite's files run as, beside its run_suite.py listing.
// A fault of the pool's own (a file over the batch budget) is a warning:
// the listing stands.
func poolOfSuite(reg *policy.Registry, r policy.PlanRequest) (*policy.PoolPlan, []Message) {
	if r.HW != policy.CUDA || r.Partition != nil || !reg.Tables.IsPoolSuite(r.Suite) {
		return nil, nil
	}
	p, err := policy.PlanPool(reg, policy.PoolRequest{Suites: []string{r.Suite}, Cadence: r.Cadence, Labels: r.Labels, MatchAllLabels: r.MatchAllLabels})
	if err != nil {
		return nil, []Message{Warning("the B200 pool cannot plan " + r.Suite + ": " + err.Error())}
	}
	return &p, nil
}

// fileStage is the stage a single-file run takes its container from: the
// roster's, with the file's own runners where the roster names none (a B200
// pool suite, or a stage whose called workflow picks its runners).
func fileStage(t *policy.Tables, fp deps.FilePlan) (policy.Stage, error) {
	if st, ok := t.Stage(fp.Suite); ok && !st.External && len(st.RunsOn) == 0 && len(fp.RunsOn) > 0 {
		st.RunsOn = slices.Clone(fp.RunsOn)
		return st, nil
	}
	return LookupStage(t, fp.Suite)
}

// poolJobName is the workflow job that runs a pool suite (stage-c-b200), or
// the suite itself when the roster names no job.
func poolJobName(t *policy.Tables, st policy.Stage) string {
	if st.Job != "" {
		return st.Job
	}
	return st.Name
}

// poolSuitesOf are the pool suites a run --stage names: every pool suite of
// the workflow job of that name (stage-c-b200), or one pool suite.
func poolSuitesOf(t *policy.Tables, stage string) []string {
	var out []string
	for _, s := range t.PoolSuites() {
		if st, ok := t.Stage(s); ok && (st.Job == stage || s == stage) {
			out = append(out, s)
		}
	}
	return out
}

// PoolBatch builds the runs of batch n of the B200 pool job in.Stage (the
// pr-test.yml job, e.g. stage-c-b200, or one pool suite): each file of the
// batch runs alone, as File plans it, in its container with its own GPU
// count (the first N devices unless --gpus names others), one after the
// other. The cadence and labels select the pool's files as the job's
// planner does.
func PoolBatch(in Inputs, n int) ([]stagerun.Request, policy.PoolBatch, error) {
	in, err := withPR(in)
	if err != nil {
		return nil, policy.PoolBatch{}, err
	}
	tables, err := Tables(in)
	if err != nil {
		return nil, policy.PoolBatch{}, err
	}
	suites := poolSuitesOf(tables, in.Stage)
	if len(suites) == 0 {
		if len(tables.PoolSuites()) == 0 {
			return nil, policy.PoolBatch{}, fmt.Errorf("--batch runs a batch of the B200 pool, and this checkout has none (its rule set is %s); drop --batch", tables.Rules)
		}
		return nil, policy.PoolBatch{}, fmt.Errorf("stage %s is not a B200 pool job; the pool's are %s and its job", in.Stage, strings.Join(tables.PoolSuites(), ", "))
	}
	if in.Shard != nil {
		return nil, policy.PoolBatch{}, errors.New("the B200 pool has batches, not shards; give --batch alone")
	}
	cadence, labels, err := suite(in, tables)
	if err != nil {
		return nil, policy.PoolBatch{}, err
	}
	reg, err := tables.LoadRegistry(in.Repo)
	if err != nil {
		return nil, policy.PoolBatch{}, err
	}
	plan, err := policy.PlanPool(reg, policy.PoolRequest{Suites: suites, Cadence: cadence, Labels: labels, MatchAllLabels: in.MatchAllLabels})
	if err != nil {
		return nil, policy.PoolBatch{}, err
	}
	batch, err := plan.Batch(n)
	if err != nil {
		return nil, policy.PoolBatch{}, err
	}
	var reqs []stagerun.Request
	for _, j := range batch.Jobs {
		req, err := PoolFileRequest(in, tables, func(string) (*policy.Registry, error) { return reg, nil }, j)
		if err != nil {
			return nil, policy.PoolBatch{}, fmt.Errorf("batch %d, %s: %w", n, j.File, err)
		}
		reqs = append(reqs, req)
	}
	return reqs, batch, nil
}

// PoolFileRequest is the run of one pool job: its file alone, as File plans
// it, in its container with its own GPU count (the first N devices unless
// --gpus or the visible devices say otherwise).
func PoolFileRequest(in Inputs, tables *policy.Tables, registry deps.Lookup, j policy.PoolJob) (stagerun.Request, error) {
	one := in
	one.Stage, one.Shard, one.Cadence, one.Labels, one.MatchAllLabels = "", nil, "", nil, false
	one.Event, one.Schedule, one.PRLabelsJSON, one.TimeoutMinutes = "", "", "", 0
	one.File = j.File
	if err := checkFileInputs(one); err != nil {
		return stagerun.Request{}, err
	}
	req, err := fileOf(one, tables, registry)
	if err != nil {
		return stagerun.Request{}, err
	}
	if one.GPUs == "" && one.VisibleDevices == "" {
		req.GPUs = stagerun.GPUs{Devices: firstDevices(j.NumGPUs)}
	}
	// The job runs where the pool put it, as the batch workflow passes its
	// runs_on, num_gpus and --suite: a test dispatched from a Hopper home
	// runs on the B200 stage, not its home's runners.
	if st, ok := tables.Stage(j.Suite); ok {
		st.RunsOn = slices.Clone(j.RunsOn)
		req.Stage = st
	}
	fp := *req.File
	fp.Suite, fp.RunsOn, fp.NumGPUs = j.Suite, slices.Clone(j.RunsOn), j.NumGPUs
	req.File = &fp
	return req, nil
}

// firstDevices are the first n devices: 0,1,...,n-1.
func firstDevices(n int) device.Set {
	ids := make(device.Set, n)
	for i := range ids {
		ids[i] = device.ID(strconv.Itoa(i))
	}
	return ids
}
