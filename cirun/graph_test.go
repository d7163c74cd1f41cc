package cirun

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/hostgpu"
	"github.com/radixark/miles-ci/policy"
)

// prTest is a PR workflow in the shape of Miles' pr-test.yml (rules §12.2),
// written for these tests: a policy job, the PR image build gated on
// stage-a-cpu, an image job with no if:, CPU stages and GPU stages gated as
// the workflow gates them.
const prTest = `
on:
  pull_request:
    types: [opened, synchronize, closed]
  schedule:
    - cron: '0 15 * * 0-5'
    - cron: '0 15 * * 6'
  workflow_dispatch:
    inputs:
      ci_image_tag:
        default: 'dev'
  workflow_call:
    inputs:
      cadence:
        default: 'release'
      image_tag:
        default: ''
jobs:
  resolve-ci-policy:
    if: github.event.action != 'closed'
    runs-on: ubuntu-latest
    outputs:
      cadence: x
      skipped_stages: x
    steps:
      - run: python -m tests.ci.ci_policy
  docker-build:
    needs: [resolve-ci-policy, stage-a-cpu]
    if: |
      always() && !cancelled() &&
      needs.resolve-ci-policy.result == 'success' &&
      (needs.stage-a-cpu.result == 'success' ||
         needs.resolve-ci-policy.outputs.bypass_fastfail == 'true')
    uses: ./.github/workflows/_build-pr-ci-image.yml
  resolve-ci-image:
    needs: [docker-build]
    runs-on: ubuntu-latest
    outputs:
      container_image: x
    steps:
      - run: echo
  stage-a-cpu:
    needs: [resolve-ci-policy]
    strategy:
      fail-fast: false
      matrix:
        partition_id: [0, 1]
    uses: ./.github/workflows/_run-cpu-ci.yml
    with:
      execute_command: >-
        python tests/ci/run_suite.py --hw cpu --suite stage-a-cpu
        --auto-partition-id ${{ matrix.partition_id }} --auto-partition-size 2
        --cadence ${{ needs.resolve-ci-policy.outputs.cadence }}
  stage-c-2-gpu-h200:
    needs: [resolve-ci-policy, resolve-ci-image, stage-a-cpu]
    if: |
      always() && !cancelled() &&
      needs.resolve-ci-policy.result == 'success' &&
      needs.resolve-ci-image.result == 'success' &&
      !contains(fromJSON(needs.resolve-ci-policy.outputs.skipped_stages || '[]'), 'stage-c-2-gpu-h200') &&
      (needs.stage-a-cpu.result == 'success' ||
        needs.resolve-ci-policy.outputs.bypass_fastfail == 'true')
    strategy:
      fail-fast: false
      max-parallel: ${{ needs.resolve-ci-policy.outputs.cadence == 'weekly' && 1 || 2 }}
      matrix:
        partition_id: [0, 1]
    uses: ./.github/workflows/_run-ci.yml
    with:
      container_image: ${{ needs.resolve-ci-image.outputs.container_image }}
      execute_command: >-
        python tests/ci/run_suite.py --hw cuda --suite stage-c-2-gpu-h200
        --auto-partition-id ${{ matrix.partition_id }} --auto-partition-size 2
        --cadence ${{ needs.resolve-ci-policy.outputs.cadence }}
        ${{ github.event_name == 'workflow_dispatch' && '--match-all-labels' || '' }}
  stage-c-8-gpu-h200:
    needs: [resolve-ci-policy, resolve-ci-image, stage-a-cpu]
    if: |
      always() && !cancelled() &&
      needs.resolve-ci-image.result == 'success' &&
      !contains(fromJSON(needs.resolve-ci-policy.outputs.skipped_stages || '[]'), 'stage-c-8-gpu-h200') &&
      (needs.stage-a-cpu.result == 'success' ||
        needs.resolve-ci-policy.outputs.bypass_fastfail == 'true')
    uses: ./.github/workflows/_run-ci.yml
    with:
      execute_command: >-
        python tests/ci/run_suite.py --hw cuda --suite stage-c-8-gpu-h200
        --cadence ${{ needs.resolve-ci-policy.outputs.cadence }}
  notify:
    needs: [stage-c-8-gpu-h200]
    if: always()
    runs-on: ubuntu-latest
    steps:
      - run: curl https://example.invalid/
`

// laterImageJob is the later resolve-ci-image gate (Miles after 31f1ca9):
// it reads the build's own result, so a bypassed fast-fail reaches the GPU stages.
const laterImageJob = `
  resolve-ci-image:
    needs: [docker-build]
    if: always() && !cancelled() && needs.docker-build.result == 'success'
`

const releaseCut = `
on:
  workflow_dispatch:
    inputs:
      branch_name:
        default: ''
jobs:
  cut-release-branch:
    runs-on: ubuntu-latest
    outputs:
      branch_name: x
      ci_image_tag: x
    steps:
      - run: git push
  run-tests-cuda:
    needs: cut-release-branch
    uses: ./.github/workflows/pr-test.yml
    with:
      cadence: release
      image_tag: ${{ needs.cut-release-branch.outputs.ci_image_tag }}
  report-ci-status:
    needs: [cut-release-branch, run-tests-cuda]
    if: always() && needs.cut-release-branch.result == 'success'
    runs-on: ubuntu-latest
    steps:
      - run: gh api
`

func roster() []policy.Stage {
	return []policy.Stage{
		{Name: "stage-a-cpu", Job: "stage-a-cpu", Backend: policy.CPU, RunsOn: []string{"ubuntu-latest"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 2},
		{Name: "stage-c-2-gpu-h200", Job: "stage-c-2-gpu-h200", Backend: policy.CUDA, RunsOn: []string{"h200", "2gpu"}, Shards: 2, MaxParallel: 2, MaxParallelWeekly: 1},
		{Name: "stage-c-8-gpu-h200", Job: "stage-c-8-gpu-h200", Backend: policy.CUDA, RunsOn: []string{"h200", "8gpu"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1},
	}
}

func workflows(t *testing.T, pr string) map[string]*Workflow {
	return parseWorkflows(t, map[string]string{policy.PRTestWorkflow: pr, ReleaseWorkflow: releaseCut})
}

// parseWorkflows parses workflow texts by file.
func parseWorkflows(t *testing.T, texts map[string]string) map[string]*Workflow {
	t.Helper()
	out := map[string]*Workflow{}
	for name, text := range texts {
		wf, err := ParseWorkflow(name, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = wf
	}
	return out
}

// fake is an executor: resolvers answer at once with their outputs, a
// shard fails when fail names its KEY/SHARD, and every unit waits hold.
type fake struct {
	mu       sync.Mutex
	fail     map[string]bool
	skipped  string
	cadence  string
	bypass   bool
	hold     time.Duration
	running  int
	peak     int
	devices  map[string]device.Set
	commands map[string]string
	calls    []string
}

func (f *fake) Run(ctx context.Context, u *Unit) Outcome {
	key := fmt.Sprintf("%s/%d", u.Node.Key, u.Shard)
	f.mu.Lock()
	f.calls = append(f.calls, key)
	f.running++
	f.peak = max(f.peak, f.running)
	if f.devices == nil {
		f.devices, f.commands = map[string]device.Set{}, map[string]string{}
	}
	f.devices[key], f.commands[key] = u.Placement.Devices, u.Command
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.running--; f.mu.Unlock() }()
	if u.Stage != nil && f.hold > 0 {
		select {
		case <-time.After(f.hold):
		case <-ctx.Done():
			return Outcome{Result: ResultCancelled, Reason: "cancelled"}
		}
	}
	switch u.Node.Kind {
	case KindPolicy:
		cadence := "regular"
		if f.cadence != "" {
			cadence = f.cadence
		}
		if c := u.Input("cadence"); c != "" {
			cadence = c
		}
		skipped := f.skipped
		if skipped == "" {
			skipped = "[]"
		}
		return Outcome{Result: ResultSuccess, Outputs: map[string]string{"cadence": cadence, "skipped_stages": skipped, "bypass_fastfail": fmt.Sprint(f.bypass)}}
	case KindImage:
		return Outcome{Result: ResultSuccess, Outputs: map[string]string{"container_image": "radixark/miles:dev"}}
	case KindPRImage:
		return Outcome{Result: ResultSuccess, Outputs: map[string]string{"built": "false"}}
	}
	if f.fail[key] {
		return Outcome{Result: ResultFailure, Reason: "tests/x.py fail", ExitCode: 255}
	}
	return Outcome{Result: ResultSuccess}
}

func states(r *Report) map[string]State {
	out := map[string]State{}
	for _, j := range r.Jobs {
		out[j.Title()] = j.State
	}
	return out
}

func run(t *testing.T, pr string, ev Event, f *fake, opt Options) *Report {
	t.Helper()
	g, err := Build(Request{Event: ev, Workflows: workflows(t, pr), Roster: roster()})
	if err != nil {
		t.Fatal(err)
	}
	return Schedule(context.Background(), g, f, opt)
}

func TestGraphStates(t *testing.T) {
	pr := Event{Name: EventPullRequest}
	eight := Options{Host: Host{Devices: device.Set{"0", "1", "2", "3", "4", "5", "6", "7"}}}
	tests := []struct {
		name string
		pr   string
		ev   Event
		f    *fake
		opt  Options
		want map[string]State
		exit int
	}{
		{name: "every job passes", pr: prTest, ev: pr, f: &fake{}, opt: eight, exit: 0, want: map[string]State{
			"pr-test/resolve-ci-policy": Passed, "pr-test/docker-build": Passed, "pr-test/resolve-ci-image": Passed,
			"pr-test/stage-a-cpu shard 1/2": Passed, "pr-test/stage-a-cpu shard 2/2": Passed,
			"pr-test/stage-c-2-gpu-h200 shard 1/2": Passed, "pr-test/stage-c-2-gpu-h200 shard 2/2": Passed,
			"pr-test/stage-c-8-gpu-h200": Passed, "pr-test/notify": NotModelled}},
		{name: "a failing stage-a-cpu shard stops the GPU stages", pr: prTest, ev: pr, f: &fake{fail: map[string]bool{"pr-test/stage-a-cpu/1": true}}, opt: eight, exit: 1,
			want: map[string]State{"pr-test/stage-a-cpu shard 1/2": Passed, "pr-test/stage-a-cpu shard 2/2": Failed, "pr-test/docker-build": Skipped,
				"pr-test/resolve-ci-image": Skipped, "pr-test/stage-c-2-gpu-h200": Skipped, "pr-test/stage-c-8-gpu-h200": Skipped}},
		// At 31f1ca9 resolve-ci-image has no if:, so its implicit success()
		// covers stage-a-cpu (an ancestor) and bypass-fastfail does not
		// reach the GPU stages: GitHub's own semantics, which Miles fixed later.
		{name: "31f1ca9 form: bypass runs the build, the image job's success() still skips", pr: prTest, ev: pr,
			f: &fake{bypass: true, fail: map[string]bool{"pr-test/stage-a-cpu/1": true}}, opt: eight, exit: 1,
			want: map[string]State{"pr-test/docker-build": Passed, "pr-test/resolve-ci-image": Skipped, "pr-test/stage-c-2-gpu-h200": Skipped}},
		{name: "later form: bypass-fastfail lets the GPU stages run", pr: strings.Replace(prTest, `
  resolve-ci-image:
    needs: [docker-build]`, laterImageJob, 1), ev: pr,
			f: &fake{bypass: true, fail: map[string]bool{"pr-test/stage-a-cpu/1": true}}, opt: eight, exit: 1,
			want: map[string]State{"pr-test/docker-build": Passed, "pr-test/resolve-ci-image": Passed,
				"pr-test/stage-c-2-gpu-h200 shard 1/2": Passed, "pr-test/stage-c-8-gpu-h200": Passed}},
		{name: "a skipped stage", pr: prTest, ev: pr, f: &fake{skipped: `["stage-c-8-gpu-h200"]`}, opt: eight, exit: 0,
			want: map[string]State{"pr-test/stage-c-8-gpu-h200": Skipped, "pr-test/stage-c-2-gpu-h200 shard 2/2": Passed}},
		{name: "a closed pull request runs nothing", pr: prTest, ev: Event{Name: EventPullRequest, Action: "closed"}, f: &fake{}, opt: eight, exit: 0,
			want: map[string]State{"pr-test/resolve-ci-policy": Skipped, "pr-test/stage-a-cpu": Skipped, "pr-test/stage-c-8-gpu-h200": Skipped, "pr-test/notify": NotModelled}},
		{name: "an 8-GPU shard on a 4-GPU host is not run", pr: prTest, ev: pr, f: &fake{}, opt: Options{Host: Host{Devices: device.Set{"0", "1", "2", "3"}}}, exit: 125,
			want: map[string]State{"pr-test/stage-c-8-gpu-h200": NotRun, "pr-test/stage-c-2-gpu-h200 shard 1/2": Passed}},
		{name: "--skip leaves it out and the run passes", pr: prTest, ev: pr, f: &fake{}, opt: Options{Host: Host{Devices: device.Set{"0", "1", "2", "3"}}, Skip: []string{"stage-c-8-gpu-h200"}}, exit: 0,
			want: map[string]State{"pr-test/stage-c-8-gpu-h200": Excluded}},
		{name: "--only cpu on a laptop", pr: prTest, ev: pr, f: &fake{}, opt: Options{Host: Host{StandIn: true}, Only: []string{"cpu"}}, exit: 0,
			want: map[string]State{"pr-test/stage-a-cpu shard 2/2": Passed, "pr-test/docker-build": Excluded, "pr-test/stage-c-2-gpu-h200": Excluded}},
		{name: "stand-ins on four device ids: the 8-GPU shard is not run", pr: prTest, ev: pr, f: &fake{}, opt: Options{Host: Host{StandIn: true, Devices: device.Set{"0", "1", "2", "3"}}}, exit: 125,
			want: map[string]State{"pr-test/stage-c-8-gpu-h200": NotRun, "pr-test/stage-c-2-gpu-h200 shard 1/2": Passed}},
		{name: "stand-ins: every GPU shard runs without devices", pr: prTest, ev: pr, f: &fake{}, opt: Options{Host: Host{StandIn: true}}, exit: 0,
			want: map[string]State{"pr-test/stage-c-8-gpu-h200": Passed}},
		{name: "a release call whose 8-GPU shard cannot run on a 4-GPU host is not-run, exit 125", pr: prTest,
			ev: Event{Name: EventRelease, ReleaseOutputs: map[string]string{"ci_image_tag": "release-v0.1.0-ci"}}, f: &fake{}, opt: Options{Host: Host{Devices: device.Set{"0", "1", "2", "3"}}}, exit: 125,
			want: map[string]State{"release-branch-cut/run-tests-cuda": NotRun, "run-tests-cuda/stage-c-8-gpu-h200": NotRun, "run-tests-cuda/stage-a-cpu shard 1/2": Passed}},
		{name: "a release call runs the PR workflow at cadence release", pr: prTest, ev: Event{Name: EventRelease, ReleaseOutputs: map[string]string{"ci_image_tag": "release-v0.1.0-ci"}}, f: &fake{}, opt: eight, exit: 0,
			want: map[string]State{"release-branch-cut/cut-release-branch": Passed, "release-branch-cut/run-tests-cuda": Passed,
				"run-tests-cuda/stage-a-cpu shard 1/2": Passed, "run-tests-cuda/stage-c-8-gpu-h200": Passed, "release-branch-cut/report-ci-status": NotModelled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.pr, tt.ev, tt.f, tt.opt)
			got := states(r)
			for k, want := range tt.want {
				if got[k] != want {
					t.Errorf("%s: wanted %q, got %q (%v)", k, want, got[k], got)
				}
			}
			if r.ExitStatus() != tt.exit {
				t.Errorf("exit: wanted %d, got %d\n%s", tt.exit, r.ExitStatus(), r.Text())
			}
		})
	}
}

func TestSkipReasons(t *testing.T) {
	r := run(t, prTest, Event{Name: EventPullRequest}, &fake{fail: map[string]bool{"pr-test/stage-a-cpu/0": true}, skipped: `["stage-c-8-gpu-h200"]`},
		Options{Host: Host{StandIn: true}})
	want := map[string]string{
		"pr-test/docker-build":       "needs stage-a-cpu, which ended failure (the cross-stage fast-fail; the bypass-fastfail label lets it run)",
		"pr-test/resolve-ci-image":   "needs docker-build, which ended skipped",
		"pr-test/stage-c-8-gpu-h200": "the policy skips it on this pull request (skipped_stages, rules §4)",
	}
	for _, j := range r.Jobs {
		if w, ok := want[j.Key]; ok && j.Reason != w {
			t.Errorf("%s: wanted %q, got %q", j.Key, w, j.Reason)
		}
	}
}

func TestDisjointDevices(t *testing.T) {
	f := &fake{hold: 50 * time.Millisecond}
	r := run(t, prTest, Event{Name: EventPullRequest}, f, Options{Host: Host{Devices: device.Set{"0", "1", "2", "3"}}, Skip: []string{"stage-c-8-gpu-h200"}})
	a, b := f.devices["pr-test/stage-c-2-gpu-h200/0"], f.devices["pr-test/stage-c-2-gpu-h200/1"]
	if len(a) != 2 || len(b) != 2 || slices.ContainsFunc(a, b.Contains) {
		t.Errorf("wanted two disjoint 2-GPU sets, got %v and %v", a, b)
	}
	if f.peak < 2 {
		t.Errorf("wanted the two shards at once, got a peak of %d", f.peak)
	}
	if r.ExitStatus() != 0 {
		t.Errorf("wanted exit 0, got %d", r.ExitStatus())
	}
}

func TestMaxParallel(t *testing.T) {
	tests := []struct {
		name     string
		cadence  string
		global   int
		wantPeak int
	}{
		// weekly: max-parallel 1 for the 2-GPU matrix, beside the 8-GPU stage.
		{"weekly matrix runs one shard at a time", "weekly", 0, 2},
		{"a regular matrix runs both shards", "regular", 0, 3},
		{"--max-parallel 1 bounds the whole run", "nightly", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{hold: 20 * time.Millisecond, cadence: tt.cadence}
			run(t, prTest, Event{Name: EventSchedule, Schedule: "0 15 * * 0-5"}, f, Options{Host: Host{StandIn: true}, MaxParallel: tt.global})
			if f.peak != tt.wantPeak {
				t.Errorf("wanted %d at once, got %d", tt.wantPeak, f.peak)
			}
		})
	}
}

func TestCommandEvaluated(t *testing.T) {
	f := &fake{}
	run(t, prTest, Event{Name: EventDispatch}, f, Options{Host: Host{StandIn: true}})
	want := "python tests/ci/run_suite.py --hw cuda --suite stage-c-2-gpu-h200 --auto-partition-id 1 --auto-partition-size 2 --cadence regular --match-all-labels"
	if got := f.commands["pr-test/stage-c-2-gpu-h200/1"]; got != want {
		t.Errorf("wanted %q, got %q", want, got)
	}
}

func TestCancelKeepsFinished(t *testing.T) {
	f := &fake{hold: time.Hour}
	g, err := Build(Request{Event: Event{Name: EventPullRequest}, Workflows: workflows(t, prTest), Roster: roster()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	notify := func(j JobReport) {
		if j.Key == "pr-test/stage-a-cpu" && j.State == Running {
			cancel() // Ctrl-C while the CPU shards run
		}
	}
	r := Schedule(ctx, g, f, Options{Host: Host{StandIn: true}, Notify: notify})
	got := states(r)
	if !r.Cancelled || r.ExitStatus() != ExitCancelled {
		t.Errorf("wanted a cancelled run (exit %d), got cancelled=%v exit %d", ExitCancelled, r.Cancelled, r.ExitStatus())
	}
	if got["pr-test/resolve-ci-policy"] != Passed {
		t.Errorf("the finished policy job: wanted passed, got %q", got["pr-test/resolve-ci-policy"])
	}
	if got["pr-test/stage-c-8-gpu-h200"] != Cancelled || got["pr-test/stage-a-cpu shard 1/2"] != Cancelled {
		t.Errorf("wanted the running and queued jobs cancelled, got %v", got)
	}
}

func TestParseHost(t *testing.T) {
	four := func() ([]hostgpu.Device, error) {
		return []hostgpu.Device{{ID: "0"}, {ID: "1"}, {ID: "2"}, {ID: "3"}}, nil
	}
	tests := []struct {
		in, want, err string
	}{
		{"none", "none", ""},
		{"all", "0,1,2,3", ""},
		{"0-7", "0,1,2,3,4,5,6,7", ""},
		{"0,1,2,3", "0,1,2,3", ""},
		{"0-1,6", "0,1,6", ""},
		{"none:0-3", "none:0,1,2,3", ""},
		{"none:all", "", `--gpus "none:all": after none: give device ids such as 0,1,2,3, a range such as 0-3, or ids of a kind such as h200:0-3 (stand-ins scheduled as on a host with those GPUs)`},
		{"none:", "", `--gpus "none:": after none: give device ids such as 0,1,2,3, a range such as 0-3, or ids of a kind such as h200:0-3 (stand-ins scheduled as on a host with those GPUs)`},
		{"none:x", "", `--gpus "none:x": after none: give device ids such as 0,1,2,3, a range such as 0-3, or ids of a kind such as h200:0-3 (stand-ins scheduled as on a host with those GPUs)`},
		{"0,0", "", `--gpus "0,0": device 0 is named twice`},
		{"0,00", "", `--gpus "0,00": device 0 is named twice`},
		{"00,01", "0,1", ""},
		{"none:00-03", "none:0,1,2,3", ""},
		{"a", "", `--gpus "a": "a" is not a device id (an index such as 0, or a uuid GPU-...); give all, none, ids such as 0,1,2,3, a range such as 0-7, or ids of a kind such as h200:0-7`},
		{"3-1", "", `--gpus "3-1": "3-1" is not a device range (LOW-HIGH of indexes, such as 0-7); give all, none, ids such as 0,1,2,3, a range such as 0-7, or ids of a kind such as h200:0-7`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			h, err := ParseHost(tt.in, four)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("wanted %q, got %v", tt.err, err)
				}
				return
			}
			if err != nil || h.String() != tt.want {
				t.Errorf("wanted %q, got %q (%v)", tt.want, h.String(), err)
			}
		})
	}
}

func TestParseWorkflowErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"unknown need", "jobs:\n  a:\n    needs: [b]\n    runs-on: x\n", "pr-test.yml:2: job a needs b, which the workflow has no job of; GitHub refuses such a workflow"},
		{"cycle", "jobs:\n  a:\n    needs: [b]\n  b:\n    needs: [a]\n", "pr-test.yml: job a is in a needs cycle; GitHub refuses such a workflow"},
		{"not a mapping", "- a\n", "pr-test.yml is not a workflow: its top level must be a mapping that holds jobs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseWorkflow("pr-test.yml", []byte(tt.text))
			if err == nil || err.Error() != tt.want {
				t.Errorf("wanted %q, got %v", tt.want, err)
			}
		})
	}
}

func FuzzParseWorkflow(f *testing.F) {
	f.Add([]byte(prTest))
	f.Add([]byte(releaseCut))
	f.Fuzz(func(t *testing.T, data []byte) {
		wf, err := ParseWorkflow("pr-test.yml", data)
		if err != nil {
			return
		}
		g, err := Build(Request{Event: Event{Name: EventPullRequest}, Workflows: map[string]*Workflow{policy.PRTestWorkflow: wf}, Roster: roster()})
		if err != nil {
			return
		}
		Schedule(context.Background(), g, &fake{}, Options{Host: Host{StandIn: true}, Inline: true})
	})
}

// BenchmarkConcurrentShards runs eight independent 20 ms shards on a
// stand-in host, one at a time and all at once: the ratio of the two is
// what running shards concurrently saves (near 8 when they overlap).
func BenchmarkConcurrentShards(b *testing.B) {
	wide := strings.Replace(prTest, "partition_id: [0, 1]\n    uses: ./.github/workflows/_run-cpu-ci.yml", "partition_id: [0, 1, 2, 3, 4, 5, 6, 7]\n    uses: ./.github/workflows/_run-cpu-ci.yml", 1)
	wide = strings.Replace(wide, "--auto-partition-size 2\n        --cadence ${{ needs.resolve-ci-policy.outputs.cadence }}\n  stage-c-2", "--auto-partition-size 8\n        --cadence ${{ needs.resolve-ci-policy.outputs.cadence }}\n  stage-c-2", 1)
	r := roster()
	r[0].Shards, r[0].MaxParallel, r[0].MaxParallelWeekly = 8, 8, 8
	wfs := map[string]*Workflow{}
	wf, err := ParseWorkflow(policy.PRTestWorkflow, []byte(wide))
	if err != nil {
		b.Fatal(err)
	}
	wfs[policy.PRTestWorkflow] = wf
	for _, mp := range []int{1, 0} {
		b.Run(fmt.Sprintf("max-parallel=%d", mp), func(b *testing.B) {
			for b.Loop() {
				g, err := Build(Request{Event: Event{Name: EventPullRequest}, Workflows: wfs, Roster: r})
				if err != nil {
					b.Fatal(err)
				}
				Schedule(context.Background(), g, &fake{hold: 20 * time.Millisecond}, Options{Host: Host{StandIn: true}, MaxParallel: mp, Only: []string{"cpu"}})
			}
		})
	}
}
