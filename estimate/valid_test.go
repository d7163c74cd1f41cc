package estimate

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCheckSeconds(t *testing.T) {
	for _, tc := range []struct {
		s        float64
		positive bool
		err      string
	}{
		{0, false, ""},
		{MaxSeconds, true, ""},
		{math.NaN(), false, "not a number of seconds"},
		{math.Inf(1), false, "not a number of seconds"},
		{math.Inf(-1), false, "not a number of seconds"},
		{-1.5, false, "is -1.5; it must not be negative"},
		{0, true, "must be more than 0"},
		{1e308, false, "is 1e+308, more than 432000"},
		{MaxSeconds + 0.5, false, "is 432000.5, more than 432000"},
		{3_000_000, false, "is 3000000, more than 432000"}, // issue 38: 34.7 days passed a workflow run's 35; the number as written, not 3e+06
		{6 * 3600, true, ""},                               // a GitHub-hosted job's longest
	} {
		err := CheckSeconds("elapsed_seconds", tc.s, tc.positive)
		if got := ""; err != nil {
			got = err.Error()
			if tc.err == "" || !strings.Contains(got, tc.err) {
				t.Errorf("%v: wanted %q, got %q", tc.s, tc.err, got)
			}
		} else if tc.err != "" {
			t.Errorf("%v: wanted %q, got none", tc.s, tc.err)
		}
	}
	if b := Bucket(MaxSeconds); b != MaxSeconds || float64(b) != float64(MaxSeconds) {
		t.Errorf("wanted the cap's bucket to be the cap, got %d", b)
	}
}

// TestBuildIgnoresInvalidSeconds: samples outside the rule never make an
// estimate (issue 31: three rows of 1e308 gave est_time=-2^63).
func TestBuildIgnoresInvalidSeconds(t *testing.T) {
	id := Identity{"tests/e2e/test_x.py", "CUDA", "stage-c-8-gpu-h100"}
	at := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	var samples []Sample
	for i, s := range []float64{1e308, math.NaN(), math.Inf(1), 1e308, 30, 40} {
		samples = append(samples, Sample{Identity: id, ElapsedS: s, RunID: int64(i), RunAttempt: 1, RecordedAt: at})
	}
	if est := Build(samples); len(est) != 0 {
		t.Errorf("wanted no estimate from 2 valid samples, got %+v", est)
	}
	samples = append(samples, Sample{Identity: id, ElapsedS: 50, RunID: 9, RunAttempt: 1, RecordedAt: at})
	if est := Build(samples)[id]; est.Samples != 3 || est.EstTime != 50 {
		t.Errorf("wanted an estimate of 50 from the 3 valid samples, got %+v", est)
	}
}
