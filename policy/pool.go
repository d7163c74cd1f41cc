package policy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/policy/pysource"
)

// The B200 pool (rules §11.8, Miles' tests/ci/b200_plan.py): the suites of
// one pool of B200 hosts are planned together as one job per selected file at
// its own GPU count, in batches that fit a GitHub token's lifetime.
const (
	// PoolMaxJobs is GitHub's matrix limit, which plan_jobs asserts.
	PoolMaxJobs = 256
	// PoolMaxBatchMinutes is MAX_BATCH_MINUTES: 23 hours, below the 24-hour
	// GITHUB_TOKEN lifetime.
	PoolMaxBatchMinutes = 23 * 60
	// poolSetupSeconds is the setup and cleanup allowance of each job.
	poolSetupSeconds = 1200
	// poolRunner is the runner label of every pool job, before "<n>gpu".
	poolRunner = "b200"
)

// PoolRequest is one b200_plan.py invocation.
type PoolRequest struct {
	// Suites are the pool suites to plan, in the order given (--suites);
	// nil plans every pool suite of the checkout.
	Suites  []string
	Cadence Cadence
	// Labels are the raw labels, as run_suite.py takes them.
	Labels         []string
	MatchAllLabels bool
}

// PoolJob is one job of the pool: one test file at its own GPU count.
type PoolJob struct {
	File string `json:"file"`
	// ShellFile is File quoted for a shell (shlex.quote), as the batch
	// workflow puts it in its command line.
	ShellFile string `json:"shell_file"`
	// Suite is the pool suite that selected the file.
	Suite string `json:"suite"`
	// NumGPUs is the registration's required_gpus: num_gpus, else its home
	// stage's count.
	NumGPUs int `json:"num_gpus"`
	// RunsOn are the runner labels, ["b200", "<n>gpu"].
	RunsOn []string `json:"runs_on"`
	// TimeoutMinutes is ceil((max(1800, est_time*1.25) + 1200) / 60) for the
	// file; in a batch, the batch's sum (any file may start last).
	TimeoutMinutes int     `json:"timeout_minutes"`
	EstTime        float64 `json:"est_time"`
}

// PoolBatch is one batch: jobs that run together, the batches one after
// another.
type PoolBatch struct {
	// Batch is the 1-based batch number.
	Batch int `json:"batch"`
	// Jobs carry the batch's timeout.
	Jobs []PoolJob `json:"jobs"`
}

// PoolPlan is the plan of the pool.
type PoolPlan struct {
	Suites  []string    `json:"suites"`
	Cadence Cadence     `json:"cadence"`
	Jobs    []PoolJob   `json:"jobs"`
	Batches []PoolBatch `json:"batches"`
}

// PoolSuites are the checkout's pool suites: those its rule set pools that
// it has as CUDA suites, in CUDA_STAGES order; none outside the B200 pool
// rules.
func (t *Tables) PoolSuites() []string {
	spec := t.spec()
	var out []string
	for _, s := range t.or().Suites.CUDA {
		if slices.Contains(spec.poolSuites, s) {
			out = append(out, s)
		}
	}
	return out
}

// TakesNumGPUs reports the B200 pool rules: register_cuda_ci takes
// num_gpus= and a CUDA file's single-file plan says its GPU count.
func (t *Tables) TakesNumGPUs() bool { return t.spec().numGPUs }

// IsPoolSuite reports a suite of the B200 pool.
func (t *Tables) IsPoolSuite(suite string) bool { return slices.Contains(t.PoolSuites(), suite) }

// RequiredGPUs is a CUDA registration's GPU count: its num_gpus, else its
// home stage's count (0 when neither is known).
func (t *Tables) RequiredGPUs(r Registration) int {
	if r.NumGPUs > 0 {
		return r.NumGPUs
	}
	s, _ := t.cudaStage(r.Suite)
	return s.NumGPUs
}

// FileRunsOn are the runner labels of a single-file run of a registration
// where the GPU-generation tables decide them (file_run.py derives its CUDA
// runner map from CUDA_STAGES): a B200 pool suite's file runs on
// ["b200", "<required_gpus>gpu"], any other CUDA_STAGES stage on its
// runs_on when the roster's row names no runner of its own (a stage whose
// called workflow picks its runners at run time). ok is false where the
// roster decides (rules §10).
func (t *Tables) FileRunsOn(r Registration) (runsOn []string, ok bool) {
	if r.Backend != CUDA {
		return nil, false
	}
	if t.IsPoolSuite(r.Suite) {
		return PoolRunsOn(t.RequiredGPUs(r)), true
	}
	if st, found := t.Stage(r.Suite); found && !st.External && len(st.RunsOn) > 0 {
		return nil, false
	}
	if cs, found := t.cudaStage(r.Suite); found && len(cs.RunsOn) > 0 {
		return slices.Clone(cs.RunsOn), true
	}
	return nil, false
}

// PoolRunsOn are a pool job's runner labels.
func PoolRunsOn(numGPUs int) []string {
	return []string{poolRunner, strconv.Itoa(numGPUs) + "gpu"}
}

// PoolTimeoutMinutes is one file's job timeout.
func PoolTimeoutMinutes(estTime float64) int {
	return int(math.Ceil((math.Max(1800, estTime*1.25) + poolSetupSeconds) / 60))
}

// PlanPool is plan_jobs then batch_jobs of b200_plan.py: the tests each pool
// suite selects under the run policy (dispatch included), one job per file,
// at most PoolMaxJobs, each file once, ordered by (-est_time, file), packed
// in that order into batches of at most PoolMaxBatchMinutes.
func PlanPool(reg *Registry, req PoolRequest) (PoolPlan, error) {
	t := reg.Tables
	pool := t.PoolSuites()
	if len(pool) == 0 {
		return PoolPlan{}, fmt.Errorf("this checkout has no B200 pool: its rule set is %s; the pool is the B200 pool line's (num_gpus= in %s _VALID_KWARGS)", t.or().Rules, CIRegisterFile)
	}
	suites := req.Suites
	if suites == nil {
		suites = pool
	}
	rp, err := t.ResolveRunPolicy(req.Cadence, req.Labels, req.MatchAllLabels)
	if err != nil {
		return PoolPlan{}, err
	}
	plan := PoolPlan{Suites: slices.Clone(suites), Cadence: rp.Cadence, Jobs: []PoolJob{}, Batches: []PoolBatch{}}
	seen := map[string]bool{}
	for _, s := range suites {
		if !slices.Contains(pool, s) {
			return PoolPlan{}, fmt.Errorf("suite %s is not a B200 pool suite; the pool suites are %s", s, strings.Join(pool, ", "))
		}
		sel, err := t.Select(reg.Registrations, CUDA, s, rp)
		if err != nil {
			return PoolPlan{}, err
		}
		for _, r := range sel.Enabled {
			if seen[r.File] {
				return PoolPlan{}, fmt.Errorf("B200 test selected more than once: %s (suite %s); give it one registration that the pool selects", r.File, s)
			}
			seen[r.File] = true
			n := t.RequiredGPUs(r)
			plan.Jobs = append(plan.Jobs, PoolJob{File: r.File, ShellFile: ShellQuote(r.File), Suite: s, NumGPUs: n,
				RunsOn: PoolRunsOn(n), TimeoutMinutes: PoolTimeoutMinutes(r.EstTime), EstTime: r.EstTime})
		}
	}
	if len(plan.Jobs) > PoolMaxJobs {
		return PoolPlan{}, fmt.Errorf("B200 test plan exceeds GitHub's %d-job matrix limit: %d jobs; disable or move tests", PoolMaxJobs, len(plan.Jobs))
	}
	slices.SortStableFunc(plan.Jobs, func(a, b PoolJob) int {
		if a.EstTime != b.EstTime {
			if a.EstTime > b.EstTime {
				return -1
			}
			return 1
		}
		return strings.Compare(a.File, b.File)
	})
	if plan.Batches, err = BatchPool(plan.Jobs); err != nil {
		return PoolPlan{}, err
	}
	return plan, nil
}

// BatchPool packs jobs, in order, into batches whose file timeouts sum to at
// most PoolMaxBatchMinutes; each job then carries its batch's sum. A file
// whose own timeout is over the budget is an error.
func BatchPool(jobs []PoolJob) ([]PoolBatch, error) {
	var groups [][]PoolJob
	var cur []PoolJob
	minutes := 0
	for _, j := range jobs {
		if j.TimeoutMinutes > PoolMaxBatchMinutes {
			return nil, fmt.Errorf("B200 test exceeds batch budget: %s (%d minutes, at most %d); lower its est_time or split the test", j.File, j.TimeoutMinutes, PoolMaxBatchMinutes)
		}
		if len(cur) > 0 && minutes+j.TimeoutMinutes > PoolMaxBatchMinutes {
			groups, cur, minutes = append(groups, cur), nil, 0
		}
		cur = append(cur, j)
		minutes += j.TimeoutMinutes
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	out := make([]PoolBatch, 0, len(groups))
	for i, g := range groups {
		sum := 0
		for _, j := range g {
			sum += j.TimeoutMinutes
		}
		b := PoolBatch{Batch: i + 1}
		for _, j := range g {
			j.RunsOn = slices.Clone(j.RunsOn)
			j.TimeoutMinutes = sum
			b.Jobs = append(b.Jobs, j)
		}
		out = append(out, b)
	}
	return out, nil
}

// Batch returns batch n (1-based).
func (p PoolPlan) Batch(n int) (PoolBatch, error) {
	if n < 1 || n > len(p.Batches) {
		return PoolBatch{}, fmt.Errorf("batch %d is not in the pool plan, which has %d batch(es); give --batch 1 to %d", n, len(p.Batches), len(p.Batches))
	}
	return p.Batches[n-1], nil
}

// HasTests is b200_plan.py's has_tests.
func (p PoolPlan) HasTests() bool { return len(p.Jobs) > 0 }

// Matrix is the matrix b200_plan.py prints and writes to $GITHUB_OUTPUT,
// byte for byte as Python's json.dumps gives it:
// {"include": [{"batch": 1, "jobs": "{\"include\": [...]}"}]}.
func (p PoolPlan) Matrix() string {
	var b strings.Builder
	b.WriteString(`{"include": [`)
	for i, batch := range p.Batches {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"batch": %d, "jobs": %s}`, batch.Batch, pysource.JSONString(batch.jobsJSON()))
	}
	b.WriteString("]}")
	return b.String()
}

// jobsJSON is one batch's jobs matrix, {"include": [JOB, ...]}, each job's
// keys in plan_jobs' order and runs_on the JSON text of the labels.
func (b PoolBatch) jobsJSON() string {
	var s strings.Builder
	s.WriteString(`{"include": [`)
	for i, j := range b.Jobs {
		if i > 0 {
			s.WriteString(", ")
		}
		fmt.Fprintf(&s, `{"file": %s, "shell_file": %s, "suite": %s, "num_gpus": %d, "runs_on": %s, "timeout_minutes": %d, "est_time": %s}`,
			pysource.JSONString(j.File), pysource.JSONString(j.ShellFile), pysource.JSONString(j.Suite), j.NumGPUs,
			pysource.JSONString(pysource.JSONList(j.RunsOn)), j.TimeoutMinutes, pysource.JSONFloat(j.EstTime))
	}
	s.WriteString("]}")
	return s.String()
}

// GitHubOutput is what b200_plan.py appends to $GITHUB_OUTPUT.
func (p PoolPlan) GitHubOutput() string {
	return "matrix=" + p.Matrix() + "\nhas_tests=" + strconv.FormatBool(p.HasTests()) + "\n"
}

// Text is the pool plan for a person: each batch and its jobs.
func (p PoolPlan) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "B200 pool (tests/ci/b200_plan.py): suites %s, cadence %s: %d job(s) in %d batch(es)\n",
		strings.Join(p.Suites, " "), p.Cadence, len(p.Jobs), len(p.Batches))
	for _, batch := range p.Batches {
		timeout := 0
		if len(batch.Jobs) > 0 {
			timeout = batch.Jobs[0].TimeoutMinutes
		}
		fmt.Fprintf(&b, "Batch %d: %d job(s), timeout %d min each\n", batch.Batch, len(batch.Jobs), timeout)
		for _, j := range batch.Jobs {
			fmt.Fprintf(&b, "  - %s (suite %s, %d GPU(s), runs on %s, est_time=%ss, own timeout %d min)\n",
				j.File, j.Suite, j.NumGPUs, strings.Join(j.RunsOn, "+"), pysource.FormatFixed0(j.EstTime), PoolTimeoutMinutes(j.EstTime))
		}
	}
	return b.String()
}

// shellSafe is the text shlex.quote leaves as it is.
var shellSafe = lazyre.New(`^[A-Za-z0-9_@%+=:,./-]+$`)

// ShellQuote quotes s for a POSIX shell as Python's shlex.quote does.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
