package ci

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/whatif"
)

// failingLease is a host lock a what-if must never take.
type failingLease struct{ t *testing.T }

func (l failingLease) TryLease(cirun.Host, device.Set) (func(), cirun.Held, bool, error) {
	l.t.Error("a what-if took the host lock")
	return func() {}, cirun.Held{}, true, nil
}

func whatIf(t *testing.T, req CIRequest) *whatif.Prediction {
	t.Helper()
	req.Repo, req.Event, req.Schedule, req.WhatIf, req.Leaser = filepath.Join("..", "..", "testdata", "miles"), "schedule", "0 15 * * 0-5", true, failingLease{t}
	ans, err := CI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	p := ans.Prediction
	if p == nil {
		t.Fatal("no prediction")
	}
	for _, s := range p.Shards {
		if s.Start < 0 || s.End < s.Start || s.GPUs > 0 && len(s.Devices) != s.GPUs {
			t.Errorf("%s: wanted a start, an end after it and its devices, got %+v", s.Job, s)
		}
	}
	if tl := p.Timeline; tl.LowerBound <= 0 || tl.LowerBound > tl.Span {
		t.Errorf("wanted a lower bound in (0, span], got %s", tl.Sentence())
	}
	return p
}

func mustHost(t *testing.T, gpus string) cirun.Host {
	t.Helper()
	h, err := cirun.ParseHost(gpus, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestWhatIfPredictsEachShard(t *testing.T) {
	one := whatIf(t, CIRequest{Host: mustHost(t, "h200:0-7")})
	if len(one.CannotRun) != 4 || !strings.Contains(one.CannotRun[0].Reason, "needs 8 H100 GPUs; this host has 8 H200") {
		t.Errorf("wanted the H100 and MI350 shards that cannot run on an H200 host, with why, got %+v", one.CannotRun)
	}
	// With --substitute the H100 stage runs on the H200 devices: more
	// work, a longer span.
	sub := whatIf(t, CIRequest{Host: mustHost(t, "h200:0-7"), Substitutes: []cirun.Substitute{{From: "h100", To: "h200"}}})
	if len(sub.CannotRun) != 2 || sub.Timeline.Span <= one.Timeline.Span {
		t.Errorf("wanted the H100 stage moved to H200 and a longer span, got %d cannot-run, span %v against %v", len(sub.CannotRun), sub.Timeline.Span, one.Timeline.Span)
	}
	var sawSub bool
	for _, s := range sub.Shards {
		sawSub = sawSub || s.Substituted == "h100=h200"
	}
	if !sawSub {
		t.Errorf("wanted a shard substituted h100=h200, got %+v", sub.Shards)
	}
}

func TestWhatIfUsesTheHistory(t *testing.T) {
	host := mustHost(t, "none:0-7")
	plain := whatIf(t, CIRequest{Host: host})
	var target whatif.PredictedShard
	for _, s := range plain.Shards {
		if strings.HasPrefix(s.Job, "pr-test/stage-c-8-gpu-h200 shard 1/2") {
			target = s
		}
	}
	if target.FromEstTime == 0 || target.Setup != whatif.DefaultSetup {
		t.Fatalf("wanted the shard at est_time with the default set-up, got %+v", target)
	}
	// The history says every file of every stage takes 1 s and a shard's
	// set-up 5 s: the prediction shrinks to fit.
	var samples []estimate.Sample
	var setups []whatif.Setup
	_, reg, err := policy.LoadTablesAndRegistry(filepath.Join("..", "..", "testdata", "miles"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reg.Registrations {
		id := estimate.Identity{TestPath: r.File, Backend: estimate.BackendName(r.Backend), Suite: r.Suite}
		samples = append(samples, estimate.Sample{Identity: id, ElapsedS: 1, RunID: 1, RunAttempt: 1, TestAttempt: 1, RecordedAt: time.Now()})
	}
	setups = append(setups, whatif.Setup{Stage: "stage-c-8-gpu-h200", Seconds: 5})
	fast := whatIf(t, CIRequest{Host: host, Durations: whatif.NewDurations(samples, setups)})
	if fast.Timeline.Span >= plain.Timeline.Span/5 {
		t.Errorf("wanted a far shorter span from the history, got %v against %v", fast.Timeline.Span, plain.Timeline.Span)
	}
	for _, s := range fast.Shards {
		if s.FromEstTime != 0 || s.Job == target.Job && s.Setup != 5 {
			t.Errorf("%s: wanted every file from the history and the stage's recorded set-up, got %+v", s.Job, s)
		}
	}
}

func TestWhatIfFleetOfHostsThatDoNotExist(t *testing.T) {
	one := whatIf(t, CIRequest{Host: mustHost(t, "h200:0-7,h100:8-15,mi350:16-23")})
	fleet := whatIf(t, CIRequest{Hosts: []cirun.Host{host(t, "h200-a", "h200:0-7", true), host(t, "h200-b", "h200:0-7", true),
		host(t, "h100-a", "h100:0-7", true), host(t, "mi350-a", "mi350:0-7", false)}})
	if len(one.CannotRun) != 0 || len(fleet.CannotRun) != 0 {
		t.Fatalf("wanted every shard placed, got %+v and %+v", one.CannotRun, fleet.CannotRun)
	}
	model := map[string]string{"h200-a": "h200", "h200-b": "h200", "h100-a": "h100", "mi350-a": "mi350"}
	for _, s := range fleet.Shards {
		if s.GPUs > 0 && model[s.Host] != s.Model {
			t.Errorf("%s: a %s shard on %s", s.Job, s.Model, s.Host)
		}
	}
	if fleet.Timeline.Span >= one.Timeline.Span {
		t.Errorf("wanted the fleet's span below one host's, got %v against %v", fleet.Timeline.Span, one.Timeline.Span)
	}
	if len(fleet.Timeline.Usage) != 4 || len(fleet.Timeline.Models) != 3 {
		t.Errorf("wanted GPU-hours for each host and a bound for each model, got %+v", fleet.Timeline)
	}
}

// host is a host of a fleet's file that need not exist.
func host(t *testing.T, name, gpus string, cpu bool) cirun.Host {
	h := mustHost(t, gpus)
	h.Name, h.Engine, h.NoCPU = name, "tcp://"+name+".invalid:8080", !cpu
	return h
}

// orderShards passes every shard, noting the order they started in.
type orderShards struct {
	mu    sync.Mutex
	order []string
}

func (o *orderShards) RunShard(_ context.Context, _ stagerun.Request, u *cirun.Unit) cirun.Outcome {
	o.mu.Lock()
	o.order = append(o.order, u.Name())
	o.mu.Unlock()
	return cirun.Outcome{Result: cirun.ResultSuccess}
}
func (*orderShards) BuildImage(context.Context, string) (string, error) { return "", nil }

// TestARunStartsTheLongestShardFirst: a real run orders the shards that
// could start by their estimates (the history's durations, else
// est_time): the longest first.
func TestARunStartsTheLongestShardFirst(t *testing.T) {
	repo := filepath.Join("..", "..", "testdata", "miles")
	_, reg, err := policy.LoadTablesAndRegistry(repo)
	if err != nil {
		t.Fatal(err)
	}
	// Every 4-GPU H200 file takes 1 s but those of the stage's last shard.
	plan, err := policy.BuildPlan(reg, policy.PlanRequest{HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", Cadence: policy.Nightly, Partition: &policy.Partition{ID: 2, Size: 3}})
	if err != nil || len(plan.Enabled) == 0 {
		t.Fatalf("wanted the last shard's files, got %v, %v", plan, err)
	}
	last := map[string]bool{}
	for _, e := range plan.Enabled {
		last[e.File] = true
	}
	var samples []estimate.Sample
	for _, r := range reg.Registrations {
		s := 1.0
		if last[r.File] {
			s = 5000
		}
		samples = append(samples, estimate.Sample{Identity: estimate.Identity{TestPath: r.File, Backend: estimate.BackendName(r.Backend), Suite: r.Suite}, ElapsedS: s, RunID: 1, RunAttempt: 1, TestAttempt: 1, RecordedAt: time.Now()})
	}
	for _, c := range []struct {
		name      string
		durations *whatif.Durations
		first     string
	}{
		{"by est_time", nil, "pr-test/stage-c-4-gpu-h200#0"},
		{"the history: the long shard first", whatif.NewDurations(samples, nil), "pr-test/stage-c-4-gpu-h200#2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &orderShards{}
			_, err := CI(context.Background(), CIRequest{Repo: repo, Event: "schedule", Schedule: "0 15 * * 0-5", Host: cirun.Host{StandIn: true}, MaxParallel: 1,
				Only: []string{"stage-c-4-gpu-h200"}, Shards: o, Durations: c.durations, Now: time.Now})
			if err != nil {
				t.Fatal(err)
			}
			if len(o.order) != 3 || o.order[0] != c.first {
				t.Errorf("wanted %s first, got %q", c.first, o.order)
			}
		})
	}
}
