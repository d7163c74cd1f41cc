// Package timeline is where a run's time went (issue 40 item 7, issue 42):
// each shard's bar from its start to its end on its host and devices, the
// run's span, and its lower bound, the larger of the critical path through
// the job graph (each job at its measured or predicted duration) and, for
// each GPU model, the GPU-seconds of its shards over that model's devices.
// No schedule of that work on those devices can end sooner, so the ratio
// of span to lower bound says how much a better order could still win.
// It is plain arithmetic on times it is given: no clock, no I/O.
package timeline

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Task is one unit of a run that took time: a stage shard, a pool file, a
// resolver or the PR image build.
type Task struct {
	// ID names the task (a shard's unit name); Job is the job it belongs
	// to, the node of the graph its needs are read from.
	ID, Job string
	// After are the IDs of tasks that must end before it starts beside its
	// job's needs (a pool batch after the batch before it).
	After []string
	// Start and Seconds are when it started, in seconds after the run
	// started, and how long it took (measured, or predicted).
	Start, Seconds float64
	// GPUs is how many devices it held; Model the model of those devices
	// ("" when the host gives none); Host and Devices where it ran.
	GPUs    int
	Model   string
	Host    string
	Devices []string
	// State is how it ended (passed, failed, would-run), for its colour.
	State string
}

// End is when the task ended, in seconds after the run started.
func (t Task) End() float64 { return t.Start + t.Seconds }

// Job is one node of the graph: the jobs it needs (with a called
// workflow's jobs also needing what their calling job needs).
type Job struct {
	ID    string
	Needs []string
}

// Devices are the devices of one model on one host, the capacity the
// GPU-seconds are spread over. A host of stand-ins without ids has none:
// its GPU shards are bounded by nothing.
type Devices struct {
	Host  string   `json:"host,omitempty"`
	Model string   `json:"gpu_model,omitempty"`
	IDs   []string `json:"devices"`
}

// ModelBound is one model's share of the lower bound: its shards'
// GPU-seconds over its devices.
type ModelBound struct {
	Model      string  `json:"gpu_model"`
	GPUSeconds float64 `json:"gpu_s"`
	Devices    int     `json:"devices"`
	Seconds    float64 `json:"bound_s"`
}

// Usage is one host's devices of one model over the span: GPU-hours the
// shards held and GPU-hours the devices stood idle.
type Usage struct {
	Host     string  `json:"host,omitempty"`
	Model    string  `json:"gpu_model,omitempty"`
	Devices  int     `json:"devices"`
	UsedGPUh float64 `json:"used_gpu_h"`
	IdleGPUh float64 `json:"idle_gpu_h"`
}

// Figures are a run's span against its lower bound.
type Figures struct {
	// Span is from the run's start to its last task's end, in seconds.
	Span float64 `json:"span_s"`
	// LowerBound is the larger of CriticalPath and every Models' bound.
	LowerBound float64 `json:"lower_bound_s"`
	// CriticalPath is the longest chain of needs, each task at its
	// duration; Path are its tasks, first to last.
	CriticalPath float64  `json:"critical_path_s"`
	Path         []string `json:"critical_path"`
	// Models are each model's GPU-seconds over its devices, in model order.
	Models []ModelBound `json:"gpu_bounds,omitempty"`
	// Binds says which bound is the lower bound: "critical path", or
	// "h200 GPU-seconds" ("GPU-seconds" for devices of no model).
	Binds string `json:"binds"`
	// Ratio is Span over LowerBound (0 when the bound is 0).
	Ratio float64 `json:"ratio"`
	// Usage are the GPU-hours used and idle per host and model.
	Usage []Usage `json:"gpu_usage,omitempty"`
	// Fleet are the devices of the run's hosts, one entry per host and
	// model: the timeline's lanes and the bound's capacity.
	Fleet []Devices `json:"fleet,omitempty"`
}

// Compute is the span, the lower bound and the GPU usage of tasks run on
// fleet, with the jobs' needs. Tasks of jobs not listed need nothing.
func Compute(tasks []Task, jobs []Job, fleet []Devices) Figures {
	f := Figures{Fleet: fleet}
	for _, t := range tasks {
		f.Span = max(f.Span, t.End())
	}
	f.CriticalPath, f.Path = criticalPath(tasks, jobs)
	f.LowerBound, f.Binds = f.CriticalPath, "critical path"
	capacity := map[string]int{}
	for _, d := range fleet {
		capacity[d.Model] += len(d.IDs)
	}
	gpuSeconds := map[string]float64{}
	for _, t := range tasks {
		if t.GPUs > 0 {
			gpuSeconds[t.Model] += float64(t.GPUs) * t.Seconds
		}
	}
	for _, m := range slices.Sorted(maps.Keys(gpuSeconds)) {
		n := capacity[m]
		if n == 0 {
			continue // devices without ids (stand-ins): nothing bounds them
		}
		b := ModelBound{Model: m, GPUSeconds: round(gpuSeconds[m]), Devices: n, Seconds: round(gpuSeconds[m] / float64(n))}
		f.Models = append(f.Models, b)
		if b.Seconds > f.LowerBound {
			f.LowerBound, f.Binds = b.Seconds, boundName(m)
		}
	}
	for _, d := range fleet {
		used := 0.0
		for _, t := range tasks {
			if t.Host == d.Host {
				for _, dev := range t.Devices {
					if slices.Contains(d.IDs, dev) {
						used += t.Seconds
					}
				}
			}
		}
		f.Usage = append(f.Usage, Usage{Host: d.Host, Model: d.Model, Devices: len(d.IDs),
			UsedGPUh: round(used / 3600), IdleGPUh: round(max(0, float64(len(d.IDs))*f.Span-used) / 3600)})
	}
	f.Span, f.CriticalPath, f.LowerBound = round(f.Span), round(f.CriticalPath), round(f.LowerBound)
	if f.LowerBound > 0 {
		f.Ratio = round(f.Span / f.LowerBound)
	}
	return f
}

// boundName names a model's GPU-seconds bound.
func boundName(model string) string {
	if model == "" {
		return "GPU-seconds"
	}
	return model + " GPU-seconds"
}

// criticalPath is the longest chain of tasks through the jobs' needs, each
// task at its duration: a task starts after every task of every job its
// job needs (a job with no task, skipped or left out, passes its own needs
// on) and after its After tasks.
func criticalPath(tasks []Task, jobs []Job) (float64, []string) {
	needs := map[string][]string{}
	for _, j := range jobs {
		needs[j.ID] = j.Needs
	}
	byJob := map[string][]int{}
	byID := map[string]int{}
	for i, t := range tasks {
		byJob[t.Job] = append(byJob[t.Job], i)
		byID[t.ID] = i
	}
	finish := make([]float64, len(tasks))
	prev := make([]int, len(tasks))
	state := make([]int8, len(tasks)) // 0 new, 1 on the stack, 2 done
	jobDone := map[string]bool{}
	jobEnd := map[string]float64{}
	jobLast := map[string]int{}
	var taskEnd func(i int) (float64, int)
	var jobFinish func(id string, seen map[string]bool) (float64, int)
	jobFinish = func(id string, seen map[string]bool) (float64, int) {
		if jobDone[id] {
			return jobEnd[id], jobLast[id]
		}
		if seen[id] { // a cycle cannot come from a workflow
			return 0, -1
		}
		seen[id] = true
		end, last := 0.0, -1
		if ts := byJob[id]; len(ts) > 0 {
			for _, i := range ts {
				if e, _ := taskEnd(i); e > end || last < 0 {
					end, last = e, i
				}
			}
		} else {
			for _, n := range needs[id] {
				if e, l := jobFinish(n, seen); e > end || last < 0 && l >= 0 {
					end, last = e, l
				}
			}
		}
		jobDone[id], jobEnd[id], jobLast[id] = true, end, last
		return end, last
	}
	taskEnd = func(i int) (float64, int) {
		switch state[i] {
		case 2:
			return finish[i], prev[i]
		case 1:
			return 0, -1
		}
		state[i] = 1
		start, from := 0.0, -1
		for _, n := range needs[tasks[i].Job] {
			if e, l := jobFinish(n, map[string]bool{}); e > start || from < 0 && l >= 0 {
				start, from = e, l
			}
		}
		for _, a := range tasks[i].After {
			if j, ok := byID[a]; ok {
				if e, _ := taskEnd(j); e > start || from < 0 {
					start, from = e, j
				}
			}
		}
		finish[i], prev[i], state[i] = start+tasks[i].Seconds, from, 2
		return finish[i], from
	}
	best, last := 0.0, -1
	for i := range tasks {
		if e, _ := taskEnd(i); e > best || last < 0 {
			best, last = e, i
		}
	}
	var path []string
	for i := last; i >= 0; i = prev[i] {
		path = append(path, tasks[i].ID)
		if len(path) > len(tasks) {
			break
		}
	}
	slices.Reverse(path)
	return best, path
}

// Sentence says the span against the lower bound in one line:
// "span 211 s, lower bound 181 s (h200 GPU-seconds: 1448 GPU-s over 8 devices; critical path 95 s): 1.17x".
func (f Figures) Sentence() string {
	var parts []string
	for _, m := range f.Models {
		name := m.Model
		if name == "" {
			name = "GPU"
		} else {
			name = strings.ToUpper(name)
		}
		parts = append(parts, fmt.Sprintf("%s %s GPU-s over %d devices = %s s", name, num(m.GPUSeconds), m.Devices, num(m.Seconds)))
	}
	parts = append(parts, "critical path "+num(f.CriticalPath)+" s")
	s := fmt.Sprintf("span %s s, lower bound %s s (%s; %s binds)", num(f.Span), num(f.LowerBound), strings.Join(parts, "; "), f.Binds)
	// A bound that shows as 0.0 s (a run of resolvers only, every shard
	// not-run) makes no ratio a person can check against the figures.
	if f.Ratio > 0 && num(f.LowerBound) != num(0) {
		s += fmt.Sprintf(": %.2fx", f.Ratio)
	}
	return s
}

// num is seconds as a person reads them: whole above 10, else one decimal.
func num(x float64) string {
	if math.Abs(x) >= 10 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// round keeps three decimals: figures from a clock carry no more.
func round(x float64) float64 { return math.Round(x*1000) / 1000 }

// Lane is one row of the timeline: a device of a host, a host's CPU work,
// or the run's own jobs; Bars are its tasks in start order.
type Lane struct {
	Host, Name string
	Bars       []Task
}

// Lanes lay tasks out one lane per host and device (a GPU task on each of
// its devices), the host's CPU tasks in lanes of their own (as many as
// ran at once), and the GPU tasks of a host with no device ids in lanes of
// their own likewise; tasks of no host and no GPU that are not shards
// (Shard false) go to the "miles-ci" lanes. Hosts come in fleet order.
func Lanes(tasks []Task, fleet []Devices, shard func(Task) bool) []Lane {
	var hosts []string
	addHost := func(h string) {
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	for _, d := range fleet {
		addHost(d.Host)
	}
	for _, t := range tasks {
		if shard(t) {
			addHost(t.Host)
		}
	}
	var out []Lane
	for _, h := range hosts {
		for _, d := range fleet {
			if d.Host != h {
				continue
			}
			for _, id := range d.IDs {
				l := Lane{Host: h, Name: gpuLane(d.Model, id)}
				for _, t := range tasks {
					if t.Host == h && slices.Contains(t.Devices, id) {
						l.Bars = append(l.Bars, t)
					}
				}
				out = append(out, l)
			}
		}
		var cpu, gpu []Task
		for _, t := range tasks {
			switch {
			case !shard(t) || t.Host != h:
			case t.GPUs == 0:
				cpu = append(cpu, t)
			case len(t.Devices) == 0:
				gpu = append(gpu, t)
			}
		}
		out = append(out, stack(h, "GPU (no device ids)", gpu)...)
		out = append(out, stack(h, "CPU", cpu)...)
	}
	var own []Task
	for _, t := range tasks {
		if !shard(t) {
			own = append(own, t)
		}
	}
	return append(out, stack("", "miles-ci", own)...)
}

func gpuLane(model, id string) string {
	if model == "" {
		return "GPU " + id
	}
	return strings.ToUpper(model) + " " + id
}

// stack puts overlapping tasks in as few lanes as hold them, each in the
// first lane free at its start.
func stack(host, name string, tasks []Task) []Lane {
	tasks = slices.Clone(tasks)
	slices.SortStableFunc(tasks, func(a, b Task) int { return cmp.Compare(a.Start, b.Start) })
	var lanes []Lane
	for _, t := range tasks {
		placed := false
		for i := range lanes {
			if last := lanes[i].Bars[len(lanes[i].Bars)-1]; last.End() <= t.Start {
				lanes[i].Bars = append(lanes[i].Bars, t)
				placed = true
				break
			}
		}
		if !placed {
			lanes = append(lanes, Lane{Host: host, Bars: []Task{t}})
		}
	}
	for i := range lanes {
		lanes[i].Name = name
		if len(lanes) > 1 {
			lanes[i].Name = fmt.Sprintf("%s %d", name, i+1)
		}
	}
	return lanes
}
