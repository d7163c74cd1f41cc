// Package whatif predicts an event's CI on a fleet before it runs (issue
// 42): the graph, placement and scheduler of a real run (package cirun,
// Options.Simulate), driven by durations instead of containers. Each test
// file takes the median of its recent runtime history (the samples
// est-time reads), else its est_time; each shard adds a set-up (image,
// layers, container start) learned from recorded shard runs, else a stated
// default. It is plain data: the use case brings the samples; nothing here
// reads a store, a clock or an engine.
package whatif

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/policy"
)

// DefaultSetup is a shard's set-up where no recorded shard run says
// better: pulling the image, preparing the dependency layers and starting
// the container, in seconds.
const DefaultSetup = 60

// Setup is one recorded shard run's set-up: its wall time less the
// seconds of its files' attempts.
type Setup struct {
	Stage   string
	Seconds float64
}

// Durations are what a prediction knows: each test file's duration from
// the history and each stage's set-up.
type Durations struct {
	files   map[estimate.Identity]float64
	samples map[estimate.Identity]int
	setups  map[string]float64
	anySet  float64
	nSetups int
	// Default is the set-up of a stage no recorded run gives (DefaultSetup
	// unless set).
	Default float64
}

// NewDurations reads the samples (the PASS attempts est-time reads, newest
// first per identity as the store gives them) and the recorded set-ups.
// A file's duration is the median of its latest estimate.MaxSamples; one
// sample is enough for a prediction (est-time needs three to rewrite a
// literal). A stage's set-up is the median of its recorded set-ups, else
// the median of every stage's, else Default.
func NewDurations(samples []estimate.Sample, setups []Setup) *Durations {
	d := &Durations{files: map[estimate.Identity]float64{}, samples: map[estimate.Identity]int{}, setups: map[string]float64{}, Default: DefaultSetup}
	grouped := map[estimate.Identity][]estimate.Sample{}
	for _, s := range samples {
		if estimate.CheckSeconds("elapsed_seconds", s.ElapsedS, false) == nil {
			grouped[s.Identity] = append(grouped[s.Identity], s)
		}
	}
	for id, group := range grouped {
		slices.SortStableFunc(group, func(a, b estimate.Sample) int {
			return cmp.Or(b.RecordedAt.Compare(a.RecordedAt), cmp.Compare(b.RunID, a.RunID), cmp.Compare(b.RunAttempt, a.RunAttempt))
		})
		recent := group[:min(len(group), estimate.MaxSamples)]
		values := make([]float64, len(recent))
		for i, s := range recent {
			values[i] = s.ElapsedS
		}
		d.files[id], _ = estimate.Percentile(values, 0.5)
		d.samples[id] = len(recent)
	}
	byStage := map[string][]float64{}
	var all []float64
	for _, s := range setups {
		if s.Seconds >= 0 {
			byStage[s.Stage] = append(byStage[s.Stage], s.Seconds)
			all = append(all, s.Seconds)
		}
	}
	for st, v := range byStage {
		d.setups[st], _ = estimate.Percentile(v, 0.5)
	}
	if len(all) > 0 {
		d.anySet, _ = estimate.Percentile(all, 0.5)
	}
	d.nSetups = len(all)
	return d
}

// Shard is one shard's predicted time, and where each part came from.
type Shard struct {
	// Setup and Tests are its set-up and its files' seconds; Seconds both.
	Setup   float64 `json:"setup_s"`
	Tests   float64 `json:"tests_s"`
	Seconds float64 `json:"seconds"`
	// FromHistory and FromEstTime count its files by where their time came
	// from; SetupFrom is "stage" (its stage's recorded runs), "recorded"
	// (every stage's) or "default".
	FromHistory int    `json:"files_from_history"`
	FromEstTime int    `json:"files_from_est_time"`
	SetupFrom   string `json:"setup_from"`
}

// Shard predicts a shard of stage (on backend) that runs files.
func (d *Durations) Shard(stage string, backend policy.Backend, files []policy.PlannedTest) Shard {
	if d == nil {
		d = NewDurations(nil, nil)
	}
	s := Shard{Setup: d.Default, SetupFrom: "default"}
	switch v, ok := d.setups[stage]; {
	case ok:
		s.Setup, s.SetupFrom = v, "stage"
	case d.nSetups > 0:
		s.Setup, s.SetupFrom = d.anySet, "recorded"
	}
	for _, f := range files {
		id := estimate.Identity{TestPath: f.File, Backend: estimate.BackendName(backend), Suite: stage}
		if v, ok := d.files[id]; ok {
			s.Tests += v
			s.FromHistory++
			continue
		}
		s.Tests += f.EstTime
		s.FromEstTime++
	}
	s.Seconds = s.Setup + s.Tests
	return s
}

// Found says what the durations hold, for the answer.
func (d *Durations) Found() string {
	if d == nil {
		d = NewDurations(nil, nil)
	}
	files := "no file has runtime history (each at its est_time)"
	if n := len(d.files); n > 0 {
		files = fmt.Sprintf("%d file(s) have runtime history (each the median of its latest %d samples at most)", n, estimate.MaxSamples)
	}
	setup := fmt.Sprintf("no recorded shard run gives a set-up (each shard %g s)", d.Default)
	if d.nSetups > 0 {
		setup = fmt.Sprintf("%d recorded shard run(s) give set-ups for %d stage(s) (the median of its stage's, else of all)", d.nSetups, len(d.setups))
	}
	return files + "; " + setup
}
