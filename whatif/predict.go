package whatif

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/timeline"
)

// Planned is a dry run's shard detail that names the files the shard
// runs, with their est_time.
type Planned interface {
	PlannedTests() []policy.PlannedTest
}

// Executor is a what-if's executor: the dry run's answers (Dry), each
// stage shard and pool file taking the time Durations predicts for the
// files its plan names (cirun.Outcome.Simulated).
type Executor struct {
	Dry       cirun.Executor
	Durations *Durations

	mu     sync.Mutex
	shards map[string]Shard
}

// Run answers as the dry run does, with the unit's predicted time.
func (e *Executor) Run(ctx context.Context, u *cirun.Unit) cirun.Outcome {
	out := e.Dry.Run(ctx, u)
	p, ok := out.Detail.(Planned)
	if out.Result != cirun.ResultSuccess || u.Stage == nil || !ok {
		return out
	}
	sh := e.Durations.Shard(u.Stage.Name, u.Stage.Backend, p.PlannedTests())
	out.Simulated = time.Duration(sh.Seconds * float64(time.Second))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.shards == nil {
		e.shards = map[string]Shard{}
	}
	e.shards[u.Name()] = sh
	return out
}

// Prediction is a what-if's answer: each shard's predicted start, end,
// host and devices; the span against its lower bound and which binds; the
// GPU-hours used and idle per host and model; the shards that cannot run
// on the fleet, and why.
type Prediction struct {
	// Heading names the event and the fleet.
	Heading string `json:"heading"`
	// Shards are the stage shards and pool files that would run, by
	// predicted start (the graph's order among those starting together).
	Shards []PredictedShard `json:"shards"`
	// Timeline is the span, the lower bound, which binds, and the GPU-hours.
	Timeline timeline.Figures `json:"timeline"`
	// CannotRun are the jobs that cannot run on this fleet, with why.
	CannotRun []Blocked `json:"cannot_run"`
	// Durations says where the times came from.
	Durations string `json:"durations"`
}

// PredictedShard is one shard's place in the prediction.
type PredictedShard struct {
	Job         string   `json:"job"`
	Host        string   `json:"host,omitempty"`
	GPUs        int      `json:"gpus"`
	Model       string   `json:"gpu_model,omitempty"`
	Devices     []string `json:"devices,omitempty"`
	Substituted string   `json:"substituted,omitempty"`
	// Start and End are seconds after the event's first job started.
	Start float64 `json:"start_s"`
	End   float64 `json:"end_s"`
	Shard
}

// Blocked is a job that cannot run on the fleet.
type Blocked struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// Predict is the prediction of a simulated run (cirun.Options.Simulate)
// whose shards e predicted.
func (e *Executor) Predict(rep *cirun.Report) Prediction {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := Prediction{Heading: rep.Heading(), Shards: []PredictedShard{}, CannotRun: []Blocked{}, Durations: e.Durations.Found()}
	if rep.Timeline != nil {
		p.Timeline = *rep.Timeline
	}
	for _, j := range rep.Jobs {
		if j.State == cirun.NotRun && (j.Kind == cirun.KindStage || j.Kind == cirun.KindPoolRun) {
			p.CannotRun = append(p.CannotRun, Blocked{Job: j.Title(), Reason: j.Reason})
			continue
		}
		sh, ok := e.shards[j.Unit()]
		if !ok || j.Start == nil {
			continue
		}
		start := j.Start.Sub(cirun.SimEpoch).Seconds()
		p.Shards = append(p.Shards, PredictedShard{Job: j.Title(), Host: j.Host, GPUs: j.GPUs, Model: string(j.Model), Devices: j.Devices.Strings(), Substituted: j.Substituted,
			Start: round(start), End: round(start + j.Duration), Shard: sh})
	}
	slices.SortStableFunc(p.Shards, func(a, b PredictedShard) int { return cmp.Compare(a.Start, b.Start) })
	return p
}

func round(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }

// Text is the prediction as a person reads it: a line per shard (start,
// end, job, where), the jobs that cannot run, the span against the lower
// bound, the GPU-hours, and where the times came from.
func (p Prediction) Text() string {
	var b strings.Builder
	b.WriteString("what-if: " + p.Heading + "\n")
	width := len("job")
	for _, s := range p.Shards {
		width = max(width, len(s.Job))
	}
	fmt.Fprintf(&b, "%7s %7s  %-*s  %s\n", "start", "end", width, "job", "where")
	for _, s := range p.Shards {
		fmt.Fprintf(&b, "%6.0fs %6.0fs  %-*s  %s\n", s.Start, s.End, width, s.Job, s.where())
	}
	if len(p.CannotRun) > 0 {
		b.WriteString("cannot run on this fleet:\n")
		for _, c := range p.CannotRun {
			fmt.Fprintf(&b, "  %s: %s\n", c.Job, c.Reason)
		}
	}
	b.WriteString(p.Timeline.Sentence() + "\n")
	for _, u := range p.Timeline.Usage {
		host := u.Host
		if host == "" {
			host = "this host"
		}
		model := strings.ToUpper(u.Model)
		if model == "" {
			model = "GPU"
		}
		fmt.Fprintf(&b, "GPU-hours on %s, %d %s: %.2f used, %.2f idle\n", host, u.Devices, model, u.UsedGPUh, u.IdleGPUh)
	}
	b.WriteString("durations: " + p.Durations + "\n")
	return b.String()
}

// where is a shard's host, GPUs, devices and substitution.
func (s PredictedShard) where() string {
	var parts []string
	if s.Host != "" {
		parts = append(parts, "on "+s.Host)
	}
	switch {
	case s.GPUs == 0:
		parts = append(parts, "CPU")
	case s.Model != "":
		parts = append(parts, fmt.Sprintf("%d %s GPUs", s.GPUs, s.Model))
	default:
		parts = append(parts, fmt.Sprintf("%d GPUs", s.GPUs))
	}
	if len(s.Devices) > 0 {
		parts = append(parts, "["+strings.Join(s.Devices, ",")+"]")
	}
	if s.Substituted != "" {
		parts = append(parts, "(substituted "+s.Substituted+")")
	}
	return strings.Join(parts, " ")
}
