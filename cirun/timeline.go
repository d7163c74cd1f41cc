package cirun

import (
	"slices"
	"strings"
	"time"

	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/timeline"
)

// timeline is the run's span against its lower bound (package timeline):
// every unit that ran in this attempt as a task, on the hosts' devices.
func (s *scheduler) timeline() *timeline.Figures {
	fleet := s.fleet()
	var tasks []timeline.Task
	var jobs []timeline.Job
	for _, nr := range s.nodes {
		jobs = append(jobs, timeline.Job{ID: nr.n.Key, Needs: s.allNeeds(nr)})
		var prevBatch, batch []string
		last := 0
		for i, ur := range nr.units {
			if !ur.started || ur.kept != nil || !ur.ran {
				continue
			}
			j := s.unitReport(ur)
			t, ok := taskOf(j, s.t0, fleet)
			if !ok {
				continue
			}
			switch {
			case nr.batchParallel == 1 && ur.u.Batch > 0:
				// One batch at a time: each file of a batch after the
				// batch before it.
				if ur.u.Batch != last {
					prevBatch, batch, last = batch, nil, ur.u.Batch
				}
				t.After = slices.Clone(prevBatch)
				batch = append(batch, t.ID)
			case nr.parallel == 1 && i > 0:
				// A matrix of max-parallel 1 runs its shards one after
				// another.
				if k := len(tasks) - 1; k >= 0 && tasks[k].Job == nr.n.Key {
					t.After = []string{tasks[k].ID}
				}
			}
			tasks = append(tasks, t)
		}
	}
	f := timeline.Compute(tasks, jobs, fleet)
	return &f
}

// allNeeds are the jobs a node waits for: its own needs, and a called
// workflow's job those of its calling job too.
func (s *scheduler) allNeeds(nr *nodeRun) []string {
	var out []string
	for n := nr; n != nil; n = n.parent {
		out = append(out, n.n.Needs...)
	}
	return out
}

// fleet are the hosts' devices, one entry per host and model; a host of
// stand-ins without ids has none.
func (s *scheduler) fleet() []timeline.Devices {
	var out []timeline.Devices
	for _, h := range s.place.hosts {
		var models []device.Model
		byModel := map[device.Model]device.Set{}
		for _, d := range h.Devices {
			m := h.modelOf(d)
			if _, ok := byModel[m]; !ok {
				models = append(models, m)
			}
			byModel[m] = append(byModel[m], d)
		}
		for _, m := range models {
			out = append(out, timeline.Devices{Host: h.Name, Model: string(m), IDs: byModel[m].Strings()})
		}
	}
	return out
}

// taskOf is a job that ran as a timeline task, its start counted from
// origin; the model is that of the devices it held (the substitute's where
// --substitute moved it), so its GPU-seconds count against them.
func taskOf(j JobReport, origin time.Time, fleet []timeline.Devices) (timeline.Task, bool) {
	if j.Start == nil || j.Reused {
		return timeline.Task{}, false
	}
	t := timeline.Task{ID: j.Title(), Job: j.Key, Start: j.Start.Sub(origin).Seconds(), Seconds: j.Duration,
		GPUs: j.GPUs, Host: j.Host, Devices: j.Devices.Strings(), State: string(j.State), Model: string(j.Model)}
	if _, to, ok := strings.Cut(j.Substituted, "="); ok {
		t.Model = to
	}
	if len(j.Devices) > 0 {
		for _, d := range fleet {
			if d.Host == j.Host && slices.Contains(d.IDs, string(j.Devices[0])) {
				t.Model = d.Model
			}
		}
	}
	return t, true
}

// Tasks are the jobs of the run that took time in this attempt, as the
// timeline draws them (report.html); none without a start (a dry run).
func (r *Report) Tasks() []timeline.Task {
	if r.Start == nil || r.Timeline == nil {
		return nil
	}
	var out []timeline.Task
	for _, j := range r.Jobs {
		if t, ok := taskOf(j, *r.Start, r.Timeline.Fleet); ok {
			out = append(out, t)
		}
	}
	return out
}

// Shard says whether a timeline task is a stage shard or pool file (its
// own lane on a host), not one of miles-ci's own jobs.
func (r *Report) Shard(t timeline.Task) bool {
	for _, j := range r.Jobs {
		if j.Title() == t.ID {
			return j.Kind == KindStage || j.Kind == KindPoolRun
		}
	}
	return false
}
