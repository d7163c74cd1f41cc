package cirun

import (
	"fmt"
	"strings"
	"time"

	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/policy"
)

// Described is an executor's Detail that has lines to show under its job
// (a policy's outputs, an image, a shard's command and tests).
type Described interface {
	Lines() []string
}

// Tested is a shard's Detail that names its command and test files.
type Tested interface {
	RunCommand() string
	TestFiles() []string
}

// fill copies what the Detail says into the report's JSON fields.
func (r *Report) fill() {
	for i := range r.Jobs {
		j := &r.Jobs[i]
		if t, ok := j.Detail.(Tested); ok {
			j.Command, j.Tests = t.RunCommand(), t.TestFiles()
			if j.Tests == nil {
				j.Tests = []string{}
			}
		}
	}
}

// Title is the job's name: a called workflow's job under its caller, a
// shard as every miles-ci output names it ("pr-test/stage-a-cpu shard 2/4",
// policy.Partition.String), a pool file as GitHub names it. The job's id
// and a pool file's name are the checkout's (or a results folder's), so
// the title is one printable line (printable.Line).
func (j JobReport) Title() string {
	t := j.Key
	if j.Batch > 0 {
		// As GitHub names a pool job: Batch N / G GPU / FILE.
		return printable.Line(fmt.Sprintf("%s (Batch %d / %d GPU / %s)", t, j.Batch, j.GPUs, j.File))
	}
	if p := j.Partition(); p != nil {
		t += " " + p.String()
	}
	return printable.Line(t)
}

// Partition is the shard of a sharded stage the job ran, nil for any other.
func (j JobReport) Partition() *policy.Partition {
	if j.Shard == nil || j.Shards <= 1 || j.Batch > 0 {
		return nil
	}
	return &policy.Partition{ID: *j.Shard, Size: j.Shards}
}

// ResultsDir is the folder a stage shard or pool file job writes in a run's
// results (Unit.ResultsDir), "" for any other job.
func (j JobReport) ResultsDir() string {
	if j.Stage == "" || (j.Kind != KindStage && j.Kind != KindPoolRun) {
		return ""
	}
	index := 0
	if j.Shard != nil {
		index = *j.Shard
	}
	return resultsDir(j.Stage, j.Batch > 0, index, j.Partition())
}

// Line is one job state change as a person follows it, elapsed into the
// run: the state, the GPUs it runs on, and why it ended so.
func (j JobReport) Line(elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "miles-ci: [%4.0fs] %-40s %s", elapsed.Seconds(), j.Title(), j.State)
	if j.Reused {
		fmt.Fprintf(&b, " (reused from attempt %d)", j.Attempt)
	}
	b.WriteString(j.where(" on GPUs "))
	if j.Reason != "" && j.State != Running {
		b.WriteString(": " + printable.Line(j.Reason))
	}
	return b.String() + "\n"
}

// Text is the graph as a person reads it: one line per job (per shard of a
// stage job) with its state, GPUs and why, and under it what it runs.
func (r *Report) Text() string {
	var b strings.Builder
	// The attempt column is as wide as its widest entry ("reused (attempt
	// 10)" is wider than the usual 18), so the GPUs line up below it.
	width, attempt := 0, 18
	for _, j := range r.Jobs {
		width = max(width, len(j.Title()))
		attempt = max(attempt, len(j.AttemptText()))
	}
	b.WriteString(r.Heading() + "\n")
	for _, j := range r.Jobs {
		gpus := ""
		if j.GPUs > 0 {
			gpus = fmt.Sprintf("%d GPUs", j.GPUs)
			if len(j.Devices) > 0 {
				gpus += " [" + j.Devices.String() + "]"
			}
		}
		if j.Host != "" {
			gpus = strings.TrimSpace("on " + j.Host + " " + gpus)
		}
		if j.Substituted != "" {
			gpus += " (substituted " + j.Substituted + ")"
		}
		gpus = printable.Line(gpus)
		state := fmt.Sprintf("%-12s", j.State)
		if r.Attempt > 1 {
			state += fmt.Sprintf(" %-*s", attempt, j.AttemptText())
		}
		line := fmt.Sprintf("%-*s  %s %-8s %s", width, j.Title(), state, gpus, printable.Line(j.Reason))
		b.WriteString(strings.TrimRight(line, " ") + "\n")
		if d, ok := j.Detail.(Described); ok {
			// A shard's command and test files are the checkout's.
			for _, l := range d.Lines() {
				b.WriteString("    " + printable.Line(l) + "\n")
			}
		}
	}
	if r.Cancelled {
		b.WriteString("cancelled: the run was interrupted; finished jobs keep their results\n")
	}
	b.WriteString(r.Tally() + "\n")
	if t := r.TimelineLine(); t != "" {
		b.WriteString(t + "\n")
	}
	return b.String()
}

// TimelineLine says where a run's time went, in one line: its span
// against its lower bound ("" for a run without times, a dry run).
func (r *Report) TimelineLine() string {
	if r.Timeline == nil || r.Timeline.Span == 0 {
		return ""
	}
	return "timeline: " + r.Timeline.Sentence()
}

// Heading names the run's event and its host or hosts, as the graph's
// text begins: "pull_request on radixark/miles (--gpus 0,1,2,3)".
func (r *Report) Heading() string {
	if len(r.Hosts) > 0 {
		var hs []string
		for _, h := range r.Hosts {
			hs = append(hs, h.Name+" "+h.GPUs)
		}
		return fmt.Sprintf("%s on %s (--hosts: %s)", printable.Line(describeEvent(r.Event)), Repository, printable.Line(strings.Join(hs, ", ")))
	}
	return fmt.Sprintf("%s on %s (--gpus %s)", printable.Line(describeEvent(r.Event)), Repository, printable.Line(r.Host))
}

// AttemptText says which attempt a job's outcome is from: "attempt 2", or
// "reused (attempt 1)" for a job a re-run kept.
func (j JobReport) AttemptText() string {
	if j.Reused {
		return fmt.Sprintf("reused (attempt %d)", j.Attempt)
	}
	return fmt.Sprintf("attempt %d", j.Attempt)
}

// Tally counts the jobs by state, in a fixed order.
func (r *Report) Tally() string {
	order := []State{WouldRun, Passed, Failed, NotRun, Cancelled, Skipped, Excluded, NotModelled}
	count := map[State]int{}
	for _, j := range r.Jobs {
		count[j.State]++
	}
	var parts []string
	for _, s := range order {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	t := fmt.Sprintf("%d jobs: %s", len(r.Jobs), strings.Join(parts, ", "))
	ran, reused := 0, 0
	for _, j := range r.Jobs {
		switch {
		case j.Reused:
			reused++
		case j.State == Passed || j.State == Failed || j.State == NotRun || j.State == Cancelled || j.State == WouldRun:
			ran++
		}
	}
	switch {
	case r.Attempt > 1 && count[WouldRun] > 0:
		// A dry run of a re-run: every job marked "attempt N" would run
		// again (issue 40: its count left out the would-run ones).
		t += fmt.Sprintf("; attempt %d would re-run %d, reuse %d", r.Attempt, ran, reused)
	case r.Attempt > 1:
		t += fmt.Sprintf("; attempt %d re-ran %d, reused %d", r.Attempt, ran, reused)
	}
	return t
}

// mermaidClass is the colour of each state.
var mermaidClass = []struct {
	state State
	style string
}{
	{Passed, "fill:#2da44e,color:#fff"},
	{WouldRun, "fill:#54aeff,color:#000"},
	{Failed, "fill:#cf222e,color:#fff"},
	{NotRun, "fill:#bf8700,color:#fff"},
	{Cancelled, "fill:#6e7781,color:#fff"},
	{Skipped, "fill:#eaeef2,color:#57606a"},
	{Excluded, "fill:#eaeef2,color:#57606a"},
	{NotModelled, "fill:#fff8c5,color:#57606a"},
}

// Mermaid is the graph as a Mermaid flowchart, one box per job coloured by
// how it ended (a stage job by its worst shard).
func (r *Report) Mermaid(g *Graph) string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	ids := map[string]string{}
	for i, n := range g.Nodes {
		ids[n.Key] = fmt.Sprintf("j%d", i)
	}
	for _, n := range g.Nodes {
		st, shards := r.nodeState(n.Key)
		label := printable.Line(n.Key)
		if shards > 1 {
			label += fmt.Sprintf(" ×%d", shards)
		}
		fmt.Fprintf(&b, "  %s[\"%s<br/>%s\"]:::%s\n", ids[n.Key], label, st, mermaidName(st))
	}
	for _, n := range g.Nodes {
		for _, d := range n.Needs {
			fmt.Fprintf(&b, "  %s --> %s\n", ids[d], ids[n.Key])
		}
		if n.Parent != "" && len(n.Needs) == 0 {
			fmt.Fprintf(&b, "  %s -.-> %s\n", ids[n.Parent], ids[n.Key])
		}
	}
	for _, c := range mermaidClass {
		fmt.Fprintf(&b, "  classDef %s %s\n", mermaidName(c.state), c.style)
	}
	return b.String()
}

func mermaidName(s State) string { return strings.ReplaceAll(string(s), "-", "_") }

// nodeState is a job's state over its shards: the first of failed, not-run,
// cancelled, then the shards' common state.
func (r *Report) nodeState(key string) (State, int) {
	var states []State
	for _, j := range r.Jobs {
		if j.Key == key {
			states = append(states, j.State)
		}
	}
	for _, s := range []State{Failed, NotRun, Cancelled, Running, Queued} {
		for _, x := range states {
			if x == s {
				return s, len(states)
			}
		}
	}
	if len(states) == 0 {
		return Queued, 0
	}
	return states[0], len(states)
}

// where is where a shard runs, for a live line: its host, its devices
// (after devices), and the substitution that put it there.
func (j JobReport) where(devices string) string {
	var b strings.Builder
	if j.Host != "" {
		b.WriteString(" on " + j.Host)
	}
	if len(j.Devices) > 0 {
		b.WriteString(devices + j.Devices.String())
	}
	if j.Substituted != "" {
		b.WriteString(" (substituted " + j.Substituted + ")")
	}
	return printable.Line(b.String())
}
