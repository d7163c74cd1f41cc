package cirun

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/policy"
)

// simStage is a stage of a generated PR workflow: its GPUs per shard (0:
// CPU), its shards' seconds, and whether it waits for stage-a-cpu (the
// CUDA stages do, the ROCm stage does not, as in Miles' two workflows).
type simStage struct {
	name    string
	gpus    int
	seconds []float64
	gated   bool
}

// simGraph is the graph of a PR workflow with a policy job and the stages.
func simGraph(t testing.TB, stages []simStage) *Graph {
	t.Helper()
	var b strings.Builder
	b.WriteString("on:\n  pull_request:\njobs:\n  resolve-ci-policy:\n    runs-on: ubuntu-latest\n    steps:\n      - run: python -m tests.ci.ci_policy\n")
	var roster []policy.Stage
	for _, st := range stages {
		needs := "[resolve-ci-policy]"
		if st.gated {
			needs = "[resolve-ci-policy, stage-a-cpu]"
		}
		hw, runsOn := "cuda", []string{"h200", fmt.Sprintf("%dgpu", st.gpus)}
		if st.gpus == 0 {
			hw, runsOn = "cpu", []string{"ubuntu-latest"}
		}
		fmt.Fprintf(&b, "  %s:\n    needs: %s\n", st.name, needs)
		cmd := "python tests/ci/run_suite.py --hw " + hw + " --suite " + st.name
		if n := len(st.seconds); n > 1 {
			var ids []string
			for i := range n {
				ids = append(ids, fmt.Sprint(i))
			}
			fmt.Fprintf(&b, "    strategy:\n      fail-fast: false\n      matrix:\n        partition_id: [%s]\n", strings.Join(ids, ", "))
			cmd += fmt.Sprintf(" --auto-partition-id ${{ matrix.partition_id }} --auto-partition-size %d", n)
		}
		fmt.Fprintf(&b, "    uses: ./.github/workflows/_run-ci.yml\n    with:\n      execute_command: %s\n", cmd)
		backend := policy.CUDA
		if st.gpus == 0 {
			backend = policy.CPU
		}
		roster = append(roster, policy.Stage{Name: st.name, Job: st.name, Backend: backend, RunsOn: runsOn, Shards: len(st.seconds)})
	}
	wf, err := ParseWorkflow(policy.PRTestWorkflow, []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(Request{Event: Event{Name: EventPullRequest}, Workflows: map[string]*Workflow{policy.PRTestWorkflow: wf}, Roster: roster})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// simFake answers at once, each shard taking its stage's seconds.
type simFake struct{ seconds map[string][]float64 }

func (f simFake) Run(_ context.Context, u *Unit) Outcome {
	if u.Stage == nil {
		return Outcome{Result: ResultSuccess, Outputs: map[string]string{"cadence": "regular", "skipped_stages": "[]"}}
	}
	return Outcome{Result: ResultSuccess, Simulated: time.Duration(f.seconds[u.Stage.Name][u.Shard] * float64(time.Second))}
}

func (f simFake) estimate(u *Unit) float64 {
	if u.Stage == nil {
		return 0
	}
	return f.seconds[u.Stage.Name][u.Shard]
}

// milesLike is the shape of Miles' PR graph on one host (testdata/miles):
// four CPU shards gating the CUDA stages of 2, 4 and 8 GPUs, and the ROCm
// stage beside them.
func milesLike(cuda, rocm float64) []simStage {
	return []simStage{
		{name: "stage-a-cpu", seconds: []float64{20, 25, 22, 30}},
		{name: "stage-b-cpu", seconds: []float64{15}},
		{name: "stage-b-2-gpu-h200", gpus: 2, seconds: []float64{cuda}, gated: true},
		{name: "stage-c-2-gpu-h200", gpus: 2, seconds: []float64{cuda * 1.2, cuda * 0.8}, gated: true},
		{name: "stage-c-4-gpu-h200", gpus: 4, seconds: []float64{cuda, cuda * 1.5, cuda * 0.7}, gated: true},
		{name: "stage-c-8-gpu-h200", gpus: 8, seconds: []float64{cuda * 0.9, cuda * 1.1}, gated: true},
		{name: "stage-c-4-gpu-mi350", gpus: 4, seconds: []float64{rocm, rocm * 1.3}},
	}
}

func simulate(t testing.TB, stages []simStage, opt Options, ordered bool) *Report {
	t.Helper()
	f := simFake{seconds: map[string][]float64{}}
	for _, st := range stages {
		f.seconds[st.name] = st.seconds
	}
	opt.Simulate = true
	if ordered {
		opt.Estimate = f.estimate
	}
	return Schedule(context.Background(), simGraph(t, stages), f, opt)
}

var eightIDs = Host{StandIn: true, Devices: device.Set{"0", "1", "2", "3", "4", "5", "6", "7"}}

func TestSimulateRunsOnTheVirtualClock(t *testing.T) {
	stages := []simStage{
		{name: "stage-a-cpu", seconds: []float64{10, 20}},
		{name: "stage-c-8-gpu-h200", gpus: 8, seconds: []float64{30, 40}, gated: true},
		{name: "stage-c-2-gpu-h200", gpus: 2, seconds: []float64{50}},
	}
	r := simulate(t, stages, Options{Host: eightIDs}, true)
	got := map[string]string{}
	for _, j := range r.Jobs {
		if j.Start != nil {
			got[j.Title()] = fmt.Sprintf("%g+%g %v", j.Start.Sub(SimEpoch).Seconds(), j.Duration, j.Devices.Strings())
		}
	}
	// The 2-GPU shard starts at once; the 8-GPU shards wait for its
	// devices and for stage-a-cpu, the longer (400 GPU-s) first.
	want := map[string]string{
		"pr-test/resolve-ci-policy":            "0+0 []",
		"pr-test/stage-a-cpu shard 1/2":        "0+10 []",
		"pr-test/stage-a-cpu shard 2/2":        "0+20 []",
		"pr-test/stage-c-2-gpu-h200":           "0+50 [0 1]",
		"pr-test/stage-c-8-gpu-h200 shard 2/2": "50+40 [0 1 2 3 4 5 6 7]",
		"pr-test/stage-c-8-gpu-h200 shard 1/2": "90+30 [0 1 2 3 4 5 6 7]",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: wanted %s, got %q", k, w, got[k])
		}
	}
	tl := r.Timeline
	if tl == nil || tl.Span != 120 || tl.CriticalPath != 60 || tl.LowerBound != 82.5 || tl.Binds != "GPU-seconds" {
		t.Fatalf("wanted span 120 against 660 GPU-seconds over 8 devices (82.5 s; the critical path is 20 + 40 s), got %+v", tl)
	}
}

// orderRatios are the mean and worst span over lower bound of n runs of
// Miles' PR graph on one 8-GPU host, each shard's seconds drawn at random
// (seeded: the same n runs each time), with the scheduler's order or the
// graph's.
func orderRatios(t testing.TB, n int, ordered bool) (mean, worst float64) {
	rng := rand.New(rand.NewPCG(42, 1))
	for range n {
		stages := milesLike(0, 0)
		for i := range stages {
			for k := range stages[i].seconds {
				if stages[i].gpus > 0 {
					stages[i].seconds[k] = 20 + rng.Float64()*100
				} else {
					stages[i].seconds[k] = 5 + rng.Float64()*40
				}
			}
		}
		tl := simulate(t, stages, Options{Host: eightIDs}, ordered).Timeline
		if tl.LowerBound > tl.Span {
			t.Fatalf("the lower bound exceeds the span: %s", tl.Sentence())
		}
		mean += tl.Ratio / float64(n)
		worst = max(worst, tl.Ratio)
	}
	return mean, worst
}

func TestOrderKeepsTheSpanNearItsLowerBound(t *testing.T) {
	gm, gw := orderRatios(t, 300, false)
	om, ow := orderRatios(t, 300, true)
	t.Logf("graph order: mean %.3f, worst %.3f; longest first: mean %.3f, worst %.3f", gm, gw, om, ow)
	if om > gm || ow > gw {
		t.Errorf("the scheduler's order (mean %.3f, worst %.3f) is no better than the graph's (mean %.3f, worst %.3f)", om, ow, gm, gw)
	}
	if om > 1.08 || ow > 1.2 {
		t.Errorf("wanted spans within 1.08x of the lower bound on average and 1.2x at worst, got %.3f and %.3f", om, ow)
	}
}

// BenchmarkOrder reports the mean and worst span over lower bound of the
// scheduler's order and of the graph's, on Miles' PR graph on one 8-GPU
// host with random shard times (the same 200 draws each time).
func BenchmarkOrder(b *testing.B) {
	for _, c := range []struct {
		name    string
		ordered bool
	}{{"graph-order", false}, {"longest-first", true}} {
		b.Run(c.name, func(b *testing.B) {
			var mean, worst float64
			for b.Loop() {
				mean, worst = orderRatios(b, 200, c.ordered)
			}
			b.ReportMetric(mean, "mean-span/bound")
			b.ReportMetric(worst, "worst-span/bound")
		})
	}
}

func TestARunWithAClockHasATimeline(t *testing.T) {
	r := run(t, prTest, Event{Name: EventPullRequest}, &fake{hold: 20 * time.Millisecond}, Options{Host: Host{Devices: device.Set{"0", "1", "2", "3", "4", "5", "6", "7"}}, Now: time.Now})
	tl := r.Timeline
	if r.Start == nil || tl == nil || tl.Span < 0.04 || tl.LowerBound > tl.Span || len(tl.Fleet) != 1 || len(r.Tasks()) == 0 {
		t.Fatalf("wanted a start, a span of two 20 ms shards in a row at least and the host's devices, got %v %+v", r.Start, tl)
	}
	if !strings.Contains(r.Text(), "\ntimeline: span ") {
		t.Errorf("wanted the timeline under the tally, got:\n%s", r.Text())
	}
	dry := run(t, prTest, Event{Name: EventPullRequest}, &fake{}, Options{Host: Host{StandIn: true}, Inline: true})
	if dry.Timeline != nil || dry.Start != nil || strings.Contains(dry.Text(), "timeline") {
		t.Errorf("wanted no timeline in a dry run, got %+v", dry.Timeline)
	}
}
