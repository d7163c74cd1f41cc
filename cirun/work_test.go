package cirun

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/policy"
)

// workRecorder answers as fake does, its image job with a typed decision,
// and keeps the work each unit was handed.
type workRecorder struct {
	fake
	mu   sync.Mutex
	work map[string]Work
}

// runWork runs the graph of a PR workflow text through w.
func runWork(t *testing.T, pr string, ev Event, w *workRecorder) *Report {
	t.Helper()
	g, err := Build(Request{Event: ev, Workflows: workflows(t, pr), Roster: roster()})
	if err != nil {
		t.Fatal(err)
	}
	return Schedule(context.Background(), g, w, Options{Host: Host{StandIn: true}})
}

// decided is the image job's decision in these tests.
var decided = deps.Image{Image: "radixark/miles:pr-7", Tag: "pr-7", Source: deps.FromPRImage}

func (w *workRecorder) Run(ctx context.Context, u *Unit) Outcome {
	w.mu.Lock()
	if w.work == nil {
		w.work = map[string]Work{}
	}
	key := u.Node.Key + "/"
	if p := u.Partition(); p != nil {
		key += p.Folder()
	}
	w.work[key] = u.Work
	w.mu.Unlock()
	if u.Node.Kind == KindImage {
		img := decided
		return Outcome{Result: ResultSuccess, Outputs: map[string]string{"container_image": img.Image}, Image: &img}
	}
	return w.fake.Run(ctx, u)
}

// TestUnitsCarryTypedWork: the graph reads a stage shard's evaluated
// run_suite.py command once, into its arguments, and hands it the image its
// image job decided, typed: the executor parses nothing.
func TestUnitsCarryTypedWork(t *testing.T) {
	w := &workRecorder{}
	rep := runWork(t, prTest, Event{Name: EventDispatch}, w)
	if rep.ExitStatus() != ExitPassed {
		t.Fatalf("wanted the graph to pass, got\n%s", rep.Text())
	}
	got := w.work["pr-test/stage-c-2-gpu-h200/2-of-2"]
	want := RunSuiteArgs{HW: policy.CUDA, Suite: "stage-c-2-gpu-h200", Cadence: "regular", MatchAllLabels: true, Partition: &policy.Partition{ID: 1, Size: 2}}
	if got.Suite == nil || !reflect.DeepEqual(*got.Suite, want) {
		t.Errorf("shard 2 of 2: wanted the arguments %+v, got %+v", want, got.Suite)
	}
	if got.Image == nil || *got.Image != decided {
		t.Errorf("shard 2 of 2: wanted the image job's decision %+v, got %+v", decided, got.Image)
	}
	if got := w.work["pr-test/stage-c-8-gpu-h200/"]; got.Suite == nil || got.Suite.Suite != "stage-c-8-gpu-h200" || got.Suite.Partition != nil || got.Image != nil {
		t.Errorf("an unsharded stage without container_image: wanted its arguments and no image, got %+v", got)
	}
}

// TestUnitImageAsWritten: a container_image no image job gave is the
// stage's input as it stands.
func TestUnitImageAsWritten(t *testing.T) {
	w := &workRecorder{}
	pr := strings.Replace(prTest, "${{ needs.resolve-ci-image.outputs.container_image }}", "radixark/miles:mine", 1)
	runWork(t, pr, Event{Name: EventPullRequest}, w)
	want := deps.Image{Image: "radixark/miles:mine", Source: deps.FromInput}
	if got := w.work["pr-test/stage-c-2-gpu-h200/1-of-2"].Image; got == nil || *got != want {
		t.Errorf("wanted %+v, got %+v", want, got)
	}
}

// TestUnreadableCommandNotRun: a stage shard whose command the graph
// cannot read, or that runs another shard than its matrix entry, is not run
// (the executor is never called for it), with the reason.
func TestUnreadableCommandNotRun(t *testing.T) {
	tests := []struct{ name, from, to, want string }{
		{"no --hw", "python tests/ci/run_suite.py --hw cuda --suite stage-c-8-gpu-h200", "python tests/ci/run_suite.py --suite stage-c-8-gpu-h200",
			"job stage-c-8-gpu-h200: its run_suite.py command names no --hw and --suite"},
		{"another shard", "--auto-partition-id ${{ matrix.partition_id }} --auto-partition-size 2\n        --cadence ${{ needs.resolve-ci-policy.outputs.cadence }}\n        ${{",
			"--auto-partition-id 0 --auto-partition-size 2\n        --cadence ${{ needs.resolve-ci-policy.outputs.cadence }}\n        ${{",
			"job stage-c-2-gpu-h200: its run_suite.py command runs --auto-partition-id 0 in matrix entry 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(prTest, tc.from) {
				t.Fatalf("prTest has no %q", tc.from)
			}
			w := &workRecorder{}
			rep := runWork(t, strings.Replace(prTest, tc.from, tc.to, 1), Event{Name: EventPullRequest}, w)
			found := false
			for _, j := range rep.Jobs {
				if strings.HasPrefix(j.Reason, tc.want) {
					found = true
					if j.State != NotRun || !j.CannotRun {
						t.Errorf("%s: wanted not-run, got %s", j.Title(), j.State)
					}
				}
			}
			if !found {
				t.Errorf("wanted a job not run because %q, got\n%s", tc.want, rep.Text())
			}
			if rep.ExitStatus() != ExitCannotRun {
				t.Errorf("wanted exit %d, got %d", ExitCannotRun, rep.ExitStatus())
			}
		})
	}
}

// poolWork records the work of each pool unit beside poolFake's answers.
type poolWork struct {
	poolFake
	mu   sync.Mutex
	work map[string]Work
}

func (p *poolWork) Run(ctx context.Context, u *Unit) Outcome {
	p.mu.Lock()
	if p.work == nil {
		p.work = map[string]Work{}
	}
	p.work[string(u.Node.Kind)+":"+u.File] = u.Work
	p.mu.Unlock()
	return p.poolFake.Run(ctx, u)
}

// TestPoolUnitsCarryTypedWork: the pool's planner unit carries its
// b200_plan request, and each file unit the planner's job and its
// run_suite.py --test-file arguments.
func TestPoolUnitsCarryTypedWork(t *testing.T) {
	p := &poolWork{poolFake: poolFake{skipped: "[]", matrix: poolMatrix([]poolJob{{"tests/e2e/b2.py", "stage-c-4-gpu-b200", 2}})}}
	g, err := Build(Request{Event: Event{Name: EventPullRequest}, Workflows: poolWorkflows(t), Roster: poolRoster()})
	if err != nil {
		t.Fatal(err)
	}
	rep := Schedule(context.Background(), g, p, Options{Host: Host{StandIn: true}})
	if rep.ExitStatus() != ExitPassed {
		t.Fatalf("wanted the graph to pass, got\n%s", rep.Text())
	}
	plan := p.work[string(KindPoolPlan)+":"].PoolPlan
	if plan == nil || plan.Cadence != policy.Regular || !reflect.DeepEqual(plan.Suites, []string{"stage-c-8-gpu-b200", "stage-c-4-gpu-b200"}) {
		t.Errorf("wanted the planner's request, got %+v", plan)
	}
	file := p.work[string(KindPoolRun)+":tests/e2e/b2.py"]
	wantJob := policy.PoolJob{File: "tests/e2e/b2.py", Suite: "stage-c-4-gpu-b200", NumGPUs: 2, RunsOn: []string{"b200", "2gpu"}}
	if file.PoolFile == nil || !reflect.DeepEqual(*file.PoolFile, wantJob) {
		t.Errorf("wanted the pool job %+v, got %+v", wantJob, file.PoolFile)
	}
	if file.Suite == nil || file.Suite.TestFile != "tests/e2e/b2.py" || file.Suite.Suite != "stage-c-4-gpu-b200" {
		t.Errorf("wanted the file's run_suite.py arguments, got %+v", file.Suite)
	}
}
