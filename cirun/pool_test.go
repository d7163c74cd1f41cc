package cirun

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/policy"
)

// poolPR, poolCall and poolBatch are the B200 pool in the shape of Miles'
// pr-test.yml stage-c-b200 job, _run-ci-b200.yml and _run-ci-b200-batch.yml
// (rules §11.8), written for these tests.
const poolPR = `
on:
  pull_request:
  workflow_dispatch:
jobs:
  policy:
    runs-on: ubuntu-latest
    outputs:
      cadence: x
    steps:
      - run: python -m tests.ci.ci_policy
  image:
    needs: [policy]
    runs-on: ubuntu-latest
    outputs:
      container_image: x
    steps:
      - run: echo
  stage-a-cpu:
    needs: [policy]
    strategy:
      fail-fast: false
      matrix:
        partition_id: [0]
    uses: ./.github/workflows/_run-cpu-ci.yml
    with:
      execute_command: python tests/ci/run_suite.py --hw cpu --suite stage-a-cpu
  stage-c-b200:
    needs: [policy, image, stage-a-cpu]
    if: |
      always() && !cancelled() &&
      needs.image.result == 'success' &&
      (!contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), 'stage-c-8-gpu-b200') ||
        !contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), 'stage-c-4-gpu-b200')) &&
      (needs.stage-a-cpu.result == 'success' ||
        needs.policy.outputs.bypass_fastfail == 'true')
    uses: ./.github/workflows/_run-ci-b200.yml
    with:
      container_image: ${{ needs.image.outputs.container_image }}
      cadence: ${{ needs.policy.outputs.cadence }}
      raw_labels: ${{ needs.policy.outputs.raw_labels }}
      match_all_labels: ${{ github.event_name == 'workflow_dispatch' }}
      run_8_gpu: ${{ !contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), 'stage-c-8-gpu-b200') }}
      run_4_gpu: ${{ !contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), 'stage-c-4-gpu-b200') }}
`

const poolCall = `
on:
  workflow_call:
    inputs:
      container_image: {type: string, required: true}
      cadence: {type: string, required: true}
      raw_labels: {type: string, required: true}
      match_all_labels: {type: boolean, default: false}
      run_8_gpu: {type: boolean, required: true}
      run_4_gpu: {type: boolean, required: true}
jobs:
  plan:
    runs-on: ubuntu-latest
    outputs:
      matrix: x
      has_tests: x
    steps:
      - uses: actions/checkout@v4
      - id: plan
        run: |
          echo "ref=$(git rev-parse HEAD)" >> "$GITHUB_OUTPUT"
          python -S -m tests.ci.b200_plan --source-root ci-source \
            --cadence ${{ inputs.cadence }} \
            --labels ${{ inputs.raw_labels }} \
            --suites ${{ inputs.run_8_gpu && 'stage-c-8-gpu-b200' || '' }} ${{ inputs.run_4_gpu && 'stage-c-4-gpu-b200' || '' }} \
            ${{ inputs.match_all_labels && '--match-all-labels' || '' }}
  test:
    needs: plan
    if: needs.plan.outputs.has_tests == 'true'
    strategy:
      fail-fast: false
      max-parallel: 1
      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
    uses: ./.github/workflows/_run-ci-b200-batch.yml
    with:
      matrix: ${{ matrix.jobs }}
      container_image: ${{ inputs.container_image }}
      cadence: ${{ inputs.cadence }}
      raw_labels: ${{ inputs.raw_labels }}
      match_all_labels: ${{ inputs.match_all_labels }}
`

const poolBatch = `
on:
  workflow_call:
    inputs:
      matrix: {type: string, required: true}
      container_image: {type: string, required: true}
      cadence: {type: string, required: true}
      raw_labels: {type: string, required: true}
      match_all_labels: {type: boolean, required: true}
jobs:
  test:
    strategy:
      fail-fast: false
      matrix: ${{ fromJSON(inputs.matrix) }}
    uses: ./.github/workflows/_run-ci.yml
    with:
      runs_on: ${{ matrix.runs_on }}
      num_gpus: ${{ matrix.num_gpus }}
      timeout_minutes: ${{ matrix.timeout_minutes }}
      container_image: ${{ inputs.container_image }}
      execute_command: >-
        python tests/ci/run_suite.py --hw cuda --suite ${{ matrix.suite }}
        --test-file ${{ matrix.shell_file }}
        --cadence ${{ inputs.cadence }}
        --labels ${{ inputs.raw_labels }}
        ${{ inputs.match_all_labels && '--match-all-labels' || '' }}
`

func poolRoster() []policy.Stage {
	return []policy.Stage{
		{Name: "stage-a-cpu", Job: "stage-a-cpu", Backend: policy.CPU, RunsOn: []string{"ubuntu-latest"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1},
		{Name: "stage-c-8-gpu-b200", Job: "stage-c-b200", Backend: policy.CUDA, RunsOn: []string{}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, SkipGated: true},
		{Name: "stage-c-4-gpu-b200", Job: "stage-c-b200", Backend: policy.CUDA, RunsOn: []string{}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, SkipGated: true},
	}
}

func poolWorkflows(t *testing.T) map[string]*Workflow {
	return parseWorkflows(t, map[string]string{policy.PRTestWorkflow: poolPR, ".github/workflows/_run-ci-b200.yml": poolCall,
		".github/workflows/_run-ci-b200-batch.yml": poolBatch})
}

// poolJob is one planned file, as b200_plan.py writes it.
type poolJob struct {
	file, suite string
	gpus        int
}

// poolMatrix is b200_plan.py's matrix output for batches of jobs.
func poolMatrix(batches ...[]poolJob) string {
	type entry struct {
		Batch int    `json:"batch"`
		Jobs  string `json:"jobs"`
	}
	var inc []entry
	for i, b := range batches {
		var files []map[string]any
		for _, j := range b {
			files = append(files, map[string]any{"file": j.file, "shell_file": j.file, "suite": j.suite, "num_gpus": j.gpus,
				"runs_on": fmt.Sprintf(`["b200", "%dgpu"]`, j.gpus), "timeout_minutes": 50, "est_time": 100})
		}
		js, _ := json.Marshal(map[string]any{"include": files})
		inc = append(inc, entry{i + 1, string(js)})
	}
	js, _ := json.Marshal(map[string]any{"include": inc})
	return string(js)
}

// poolFake answers the resolvers, plans the pool as matrix says, and
// records each file's run: its command, devices and the batches running
// beside it.
type poolFake struct {
	mu       sync.Mutex
	skipped  string
	matrix   string
	fail     string
	hold     time.Duration
	plan     string
	commands map[string]string
	running  map[int]int
	overlap  bool
	peak     int
}

func (f *poolFake) Run(ctx context.Context, u *Unit) Outcome {
	switch u.Node.Kind {
	case KindPolicy:
		return Outcome{Result: ResultSuccess, Outputs: map[string]string{"cadence": "regular", "raw_labels": "run-ci-short", "skipped_stages": f.skipped, "bypass_fastfail": "false"}}
	case KindImage:
		return Outcome{Result: ResultSuccess, Outputs: map[string]string{"container_image": "radixark/miles:dev"}}
	case KindPoolPlan:
		f.plan = u.Command
		has := f.matrix != `{"include":null}`
		return Outcome{Result: ResultSuccess, Outputs: map[string]string{"matrix": f.matrix, "has_tests": fmt.Sprint(has)}}
	case KindPoolRun:
		f.mu.Lock()
		if f.commands == nil {
			f.commands, f.running = map[string]string{}, map[int]int{}
		}
		f.commands[u.File] = fmt.Sprintf("%s gpus=%d runs_on=%v with=%v", u.Command, u.GPUs, u.RunsOn, u.With["timeout_minutes"])
		f.running[u.Batch]++
		for b, n := range f.running {
			f.overlap = f.overlap || (b != u.Batch && n > 0)
		}
		f.peak = max(f.peak, f.running[u.Batch])
		f.mu.Unlock()
		time.Sleep(f.hold)
		f.mu.Lock()
		f.running[u.Batch]--
		f.mu.Unlock()
		if u.File == f.fail {
			return Outcome{Result: ResultFailure, Reason: u.File + " fail", ExitCode: 255}
		}
	}
	return Outcome{Result: ResultSuccess}
}

func TestPoolGraph(t *testing.T) {
	eight := Host{Devices: device.Set{"0", "1", "2", "3", "4", "5", "6", "7"}}
	four := Host{Devices: device.Set{"0", "1", "2", "3"}}
	two := poolMatrix(
		[]poolJob{{"tests/e2e/a8.py", "stage-c-8-gpu-b200", 8}, {"tests/e2e/b2.py", "stage-c-4-gpu-b200", 2}},
		[]poolJob{{"tests/e2e/c1.py", "stage-c-4-gpu-b200", 1}, {"tests/e2e/d2.py", "stage-c-4-gpu-b200", 2}})
	plan := "python -S -m tests.ci.b200_plan --source-root ci-source --cadence regular --labels run-ci-short --suites "
	tests := []struct {
		name     string
		ev       Event
		f        *poolFake
		opt      Options
		want     map[string]State
		plan     string
		commands map[string]string
		exit     int
	}{
		{name: "both suites run: one unit per file, batch by batch", ev: Event{Name: EventPullRequest}, f: &poolFake{skipped: "[]", matrix: two}, opt: Options{Host: eight},
			want: map[string]State{"pr-test/stage-c-b200": Passed, "stage-c-b200/plan": Passed,
				"stage-c-b200/test (Batch 1 / 8 GPU / tests/e2e/a8.py)": Passed, "stage-c-b200/test (Batch 1 / 2 GPU / tests/e2e/b2.py)": Passed,
				"stage-c-b200/test (Batch 2 / 1 GPU / tests/e2e/c1.py)": Passed, "stage-c-b200/test (Batch 2 / 2 GPU / tests/e2e/d2.py)": Passed},
			plan: plan + "stage-c-8-gpu-b200 stage-c-4-gpu-b200",
			commands: map[string]string{
				"tests/e2e/a8.py": "python tests/ci/run_suite.py --hw cuda --suite stage-c-8-gpu-b200 --test-file tests/e2e/a8.py --cadence regular --labels run-ci-short gpus=8 runs_on=[b200 8gpu] with=50",
				"tests/e2e/c1.py": "python tests/ci/run_suite.py --hw cuda --suite stage-c-4-gpu-b200 --test-file tests/e2e/c1.py --cadence regular --labels run-ci-short gpus=1 runs_on=[b200 1gpu] with=50",
			}},
		{name: "a dispatch: run_8_gpu false is a boolean, --match-all-labels", ev: Event{Name: EventDispatch},
			f: &poolFake{skipped: `["stage-c-8-gpu-b200"]`, matrix: poolMatrix([]poolJob{{"tests/e2e/b2.py", "stage-c-4-gpu-b200", 2}})}, opt: Options{Host: eight},
			want: map[string]State{"pr-test/stage-c-b200": Passed, "stage-c-b200/test (Batch 1 / 2 GPU / tests/e2e/b2.py)": Passed},
			plan: plan + "stage-c-4-gpu-b200 --match-all-labels",
			commands: map[string]string{
				"tests/e2e/b2.py": "python tests/ci/run_suite.py --hw cuda --suite stage-c-4-gpu-b200 --test-file tests/e2e/b2.py --cadence regular --labels run-ci-short --match-all-labels gpus=2 runs_on=[b200 2gpu] with=50",
			}},
		{name: "both suites skipped: the job is skipped", ev: Event{Name: EventPullRequest},
			f: &poolFake{skipped: `["stage-c-8-gpu-b200","stage-c-4-gpu-b200"]`, matrix: two}, opt: Options{Host: eight},
			want: map[string]State{"pr-test/stage-c-b200": Skipped, "stage-c-b200/plan": Skipped, "stage-c-b200/test": Skipped}},
		{name: "no test planned: has_tests false skips the batches", ev: Event{Name: EventPullRequest},
			f: &poolFake{skipped: "[]", matrix: `{"include":null}`}, opt: Options{Host: eight},
			want: map[string]State{"pr-test/stage-c-b200": Passed, "stage-c-b200/plan": Passed, "stage-c-b200/test": Skipped}},
		{name: "an 8-GPU file on a 4-GPU host is not run; the rest run", ev: Event{Name: EventPullRequest}, f: &poolFake{skipped: "[]", matrix: two}, opt: Options{Host: four},
			want: map[string]State{"pr-test/stage-c-b200": NotRun, "stage-c-b200/test (Batch 1 / 8 GPU / tests/e2e/a8.py)": NotRun,
				"stage-c-b200/test (Batch 1 / 2 GPU / tests/e2e/b2.py)": Passed, "stage-c-b200/test (Batch 2 / 2 GPU / tests/e2e/d2.py)": Passed},
			exit: ExitCannotRun},
		{name: "a failing file fails the job, its batch peers and the next batch still run (fail-fast false)", ev: Event{Name: EventPullRequest},
			f: &poolFake{skipped: "[]", matrix: two, fail: "tests/e2e/a8.py"}, opt: Options{Host: eight},
			want: map[string]State{"pr-test/stage-c-b200": Failed, "stage-c-b200/test (Batch 1 / 8 GPU / tests/e2e/a8.py)": Failed,
				"stage-c-b200/test (Batch 1 / 2 GPU / tests/e2e/b2.py)": Passed, "stage-c-b200/test (Batch 2 / 2 GPU / tests/e2e/d2.py)": Passed},
			exit: ExitFailed},
		{name: "--skip one pool suite leaves its files out", ev: Event{Name: EventPullRequest}, f: &poolFake{skipped: "[]", matrix: two}, opt: Options{Host: four, Skip: []string{"stage-c-8-gpu-b200"}},
			want: map[string]State{"pr-test/stage-c-b200": Passed, "stage-c-b200/test (Batch 1 / 8 GPU / tests/e2e/a8.py)": Excluded,
				"stage-c-b200/test (Batch 1 / 2 GPU / tests/e2e/b2.py)": Passed}},
		{name: "--skip both pool suites leaves the job out", ev: Event{Name: EventPullRequest}, f: &poolFake{skipped: "[]", matrix: two}, opt: Options{Host: four, Skip: []string{"cuda"}},
			want: map[string]State{"pr-test/stage-c-b200": Excluded, "stage-c-b200/plan": Skipped}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Build(Request{Event: tc.ev, Workflows: poolWorkflows(t), Roster: poolRoster()})
			if err != nil {
				t.Fatal(err)
			}
			rep := Schedule(context.Background(), g, tc.f, tc.opt)
			got := states(rep)
			for k, want := range tc.want {
				if got[k] != want {
					t.Errorf("%s: wanted %q, got %q (all: %v)", k, want, got[k], got)
				}
			}
			if tc.plan != "" {
				_, step, _ := strings.Cut(tc.f.plan, "\n")
				if got := strings.Join(strings.Fields(strings.ReplaceAll(step, "\\", "")), " "); got != tc.plan {
					t.Errorf("planner step: wanted %q, got %q", tc.plan, got)
				}
			}
			for file, want := range tc.commands {
				if got := tc.f.commands[file]; got != want {
					t.Errorf("%s: wanted %q, got %q", file, want, got)
				}
			}
			if got := rep.ExitStatus(); got != tc.exit {
				t.Errorf("exit: wanted %d, got %d", tc.exit, got)
			}
		})
	}
}

// TestPoolBatchesInTurn: max-parallel 1 of the batches: batch 2 starts when
// batch 1 has ended; a batch's files run together.
func TestPoolBatchesInTurn(t *testing.T) {
	f := &poolFake{skipped: "[]", hold: 20 * time.Millisecond, matrix: poolMatrix(
		[]poolJob{{"tests/e2e/a.py", "stage-c-4-gpu-b200", 2}, {"tests/e2e/b.py", "stage-c-4-gpu-b200", 2}},
		[]poolJob{{"tests/e2e/c.py", "stage-c-4-gpu-b200", 2}, {"tests/e2e/d.py", "stage-c-4-gpu-b200", 2}})}
	g, err := Build(Request{Event: Event{Name: EventPullRequest}, Workflows: poolWorkflows(t), Roster: poolRoster()})
	if err != nil {
		t.Fatal(err)
	}
	rep := Schedule(context.Background(), g, f, Options{Host: Host{Devices: device.Set{"0", "1", "2", "3"}}})
	if f.overlap {
		t.Error("wanted the batches one after the other, got two running at once")
	}
	if f.peak != 2 {
		t.Errorf("wanted a batch's two files at once, got a peak of %d", f.peak)
	}
	var devs []device.Set
	for _, j := range rep.Jobs {
		if j.Batch == 1 {
			devs = append(devs, j.Devices)
		}
	}
	if len(devs) != 2 || slices.ContainsFunc(devs[0], devs[1].Contains) {
		t.Errorf("wanted disjoint devices for batch 1's files, got %v", devs)
	}
}

// TestParsePoolPlan reads the planner's evaluated step.
func TestParsePoolPlan(t *testing.T) {
	tests := []struct {
		name, script string
		want         policy.PoolRequest
		err          string
	}{
		{"both suites", "echo x >> $GITHUB_OUTPUT\npython -S -m tests.ci.b200_plan --source-root ci-source \\\n --cadence weekly \\\n --labels a b \\\n --suites s8 s4 \\\n \n",
			policy.PoolRequest{Cadence: policy.Weekly, Labels: []string{"a", "b"}, Suites: []string{"s8", "s4"}}, ""},
		{"no suite, all labels", "python -S -m tests.ci.b200_plan --cadence regular --labels --suites --match-all-labels",
			policy.PoolRequest{Cadence: policy.Regular, Labels: []string{}, Suites: []string{}, MatchAllLabels: true}, ""},
		{"no planner", "python -m tests.ci.run_suite", policy.PoolRequest{}, "its step runs no python -m tests.ci.b200_plan"},
		{"no --suites", "python -m tests.ci.b200_plan --cadence regular", policy.PoolRequest{}, "tests.ci.b200_plan needs --suites"},
		{"unknown flag", "python -m tests.ci.b200_plan --suites x --fast", policy.PoolRequest{}, "tests.ci.b200_plan: unknown argument --fast"},
		{"bad cadence", "python -m tests.ci.b200_plan --suites x --cadence daily", policy.PoolRequest{}, "tests.ci.b200_plan --cadence:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePoolPlan(tc.script)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("wanted an error %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("wanted %+v, got %+v", tc.want, got)
			}
		})
	}
}

// FuzzPool feeds the pool's batch job any planner matrix and the planner
// any step: neither may panic or hang.
func FuzzPool(f *testing.F) {
	f.Add(poolMatrix([]poolJob{{"tests/e2e/a8.py", "stage-c-8-gpu-b200", 8}}), "python -m tests.ci.b200_plan --cadence weekly --labels a --suites s")
	f.Add(`{"include":[{"batch":1,"jobs":"{\"include\":[{\"file\":1,\"num_gpus\":\"x\",\"runs_on\":\"[\"}]}"}]}`, "tests.ci.b200_plan --suites")
	f.Add(`{"include":[{"jobs":"{}"}]}`, "")
	f.Fuzz(func(t *testing.T, matrix, script string) {
		ParsePoolPlan(script)
		g, err := Build(Request{Event: Event{Name: EventPullRequest}, Workflows: poolWorkflows(t), Roster: poolRoster()})
		if err != nil {
			t.Fatal(err)
		}
		Schedule(context.Background(), g, &poolFake{skipped: "[]", matrix: matrix}, Options{Host: Host{Devices: device.Set{"0", "1"}}, Inline: true})
	})
}

// TestPoolBound: a plan of more than 256 files is refused with its reason,
// as b200_plan.py refuses it.
func TestPoolBound(t *testing.T) {
	var a, b []poolJob
	for i := range 200 {
		a = append(a, poolJob{fmt.Sprintf("tests/e2e/a%d.py", i), "stage-c-4-gpu-b200", 1})
		b = append(b, poolJob{fmt.Sprintf("tests/e2e/b%d.py", i), "stage-c-4-gpu-b200", 1})
	}
	g, err := Build(Request{Event: Event{Name: EventPullRequest}, Workflows: poolWorkflows(t), Roster: poolRoster()})
	if err != nil {
		t.Fatal(err)
	}
	rep := Schedule(context.Background(), g, &poolFake{skipped: "[]", matrix: poolMatrix(a, b)}, Options{Host: Host{StandIn: true}})
	want := "job test: its batches have more than 256 files; the pool plans at most 256"
	got := ""
	for _, j := range rep.Jobs {
		if j.Key == "stage-c-b200/test" {
			got = j.Reason
		}
	}
	if !strings.HasSuffix(got, want) || rep.ExitStatus() != ExitCannotRun {
		t.Errorf("wanted %q and exit 125, got %q and %d", want, got, rep.ExitStatus())
	}
}
