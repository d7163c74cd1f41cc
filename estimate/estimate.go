// Package estimate is Miles' est_time calibration (rules §13.2-§13.3, as
// tests/ci/runtime_estimate/update_est_time.py on jiajun/ci-runtime-est-time
// does it): the latest PASS samples of each test identity give an inclusive
// p90, rounded up to a bucket, which replaces the registration's numeric
// est_time literal in place. It is plain data: no database, no files, no
// clock; the store and the use case bring the samples and the sources.
package estimate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// The calibration's constants (update_est_time.py's WINDOW_DAYS,
// MAX_SAMPLES and MIN_SAMPLES).
const (
	WindowDays = 21
	MaxSamples = 15
	MinSamples = 3
)

// Identity is what one estimate belongs to: (test_path, backend, suite),
// with backend as Miles spells it in the table (CUDA, CPU, ROCM).
type Identity struct {
	TestPath, Backend, Suite string
}

// Sample is one PASS attempt the store read, as Miles' RuntimeSample.
type Sample struct {
	Identity
	ElapsedS    float64
	RunID       int64
	RunAttempt  int
	TestAttempt int
	RecordedAt  time.Time
}

// RunAttempt is a GitHub Actions run and its attempt.
type RunAttempt struct {
	RunID   int64 `json:"run_id"`
	Attempt int   `json:"run_attempt"`
}

// Estimate is an identity's calibrated est_time and the samples behind it.
type Estimate struct {
	Samples int     `json:"samples"`
	P90     float64 `json:"p90_s"`
	EstTime int     `json:"est_time"`
	// RunAttempts are the samples' runs, newest first, each once.
	RunAttempts []RunAttempt `json:"run_attempts"`
}

// Window is the half-open UTC window [from, before) of the calibration
// anchored at asOf: before is asOf's midnight in UTC, from 21 days earlier.
func Window(asOf time.Time) (from, before time.Time) {
	y, m, d := asOf.Date()
	before = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return before.AddDate(0, 0, -WindowDays), before
}

// Percentile is the inclusive percentile p (0..1) of values: linear
// between the ranks around (n-1)·p of the sorted values.
func Percentile(values []float64, p float64) (float64, error) {
	if len(values) == 0 {
		return 0, fmt.Errorf("percentile requires at least one value")
	}
	if p < 0 || p > 1 {
		return 0, fmt.Errorf("percentile must be between 0 and 1, got %v", p)
	}
	ordered := slices.Clone(values)
	slices.Sort(ordered)
	rank := float64(len(ordered)-1) * p
	lower, upper := int(math.Floor(rank)), int(math.Ceil(rank))
	if lower == upper {
		return ordered[lower], nil
	}
	return ordered[lower] + (ordered[upper]-ordered[lower])*(rank-float64(lower)), nil
}

// Bucket rounds seconds up to a multiple of 10 through 200 s and of 100
// above, and never below 10.
func Bucket(seconds float64) int {
	bucket := 10.0
	if seconds > 200 {
		bucket = 100
	}
	return int(max(10, math.Ceil(seconds/bucket)*bucket))
}

// Build groups the samples by identity and estimates each identity with at
// least MinSamples: its latest MaxSamples by (recorded_at, run id, run
// attempt), newest first. The sort is stable, so samples tied on all three
// keep the order the store gave them (test_attempt descending), as Python's
// sorted(reverse=True) keeps them.
func Build(samples []Sample) map[Identity]Estimate {
	grouped := map[Identity][]Sample{}
	for _, s := range samples {
		if CheckSeconds("elapsed_seconds", s.ElapsedS, false) != nil {
			continue // the store skips these, with a warning; never estimate from one
		}
		grouped[s.Identity] = append(grouped[s.Identity], s)
	}
	estimates := map[Identity]Estimate{}
	for id, group := range grouped {
		slices.SortStableFunc(group, func(a, b Sample) int {
			return cmp.Or(b.RecordedAt.Compare(a.RecordedAt), cmp.Compare(b.RunID, a.RunID), cmp.Compare(b.RunAttempt, a.RunAttempt))
		})
		recent := group[:min(len(group), MaxSamples)]
		if len(recent) < MinSamples {
			continue
		}
		values := make([]float64, len(recent))
		var runs []RunAttempt
		for i, s := range recent {
			values[i] = s.ElapsedS
			ra := RunAttempt{s.RunID, s.RunAttempt}
			if !slices.Contains(runs, ra) {
				runs = append(runs, ra)
			}
		}
		p90, _ := Percentile(values, 0.9) // recent is never empty here
		estimates[id] = Estimate{Samples: len(recent), P90: p90, EstTime: Bucket(p90), RunAttempts: runs}
	}
	return estimates
}
