package whatif

import (
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/policy"
)

func sample(file string, seconds float64, day int) estimate.Sample {
	return estimate.Sample{Identity: estimate.Identity{TestPath: file, Backend: "CUDA", Suite: "stage-c-4-gpu-h200"}, ElapsedS: seconds,
		RunID: int64(day), RunAttempt: 1, TestAttempt: 1, RecordedAt: time.Date(2026, 12, day, 0, 0, 0, 0, time.UTC)}
}

func TestShardDurations(t *testing.T) {
	var samples []estimate.Sample
	// a.py: 20 old runs of 1000 s, then 15 of 100 s: only the latest 15 count.
	for d := 1; d <= 20; d++ {
		samples = append(samples, sample("tests/e2e/a.py", 1000, d))
	}
	for d := 21; d <= 35; d++ {
		samples = append(samples, sample("tests/e2e/a.py", 100, d))
	}
	// b.py: one sample is enough for a prediction.
	samples = append(samples, sample("tests/e2e/b.py", 42, 3))
	setups := []Setup{{Stage: "stage-c-4-gpu-h200", Seconds: 10}, {Stage: "stage-c-4-gpu-h200", Seconds: 30}, {Stage: "stage-c-4-gpu-h200", Seconds: 20},
		{Stage: "stage-a-cpu", Seconds: 90}}
	d := NewDurations(samples, setups)
	files := []policy.PlannedTest{{File: "tests/e2e/a.py", EstTime: 600}, {File: "tests/e2e/b.py", EstTime: 60}, {File: "tests/e2e/c.py", EstTime: 300}}
	for _, c := range []struct {
		name, stage string
		backend     policy.Backend
		want        Shard
	}{
		{"history where there is some, est_time elsewhere; the stage's set-up", "stage-c-4-gpu-h200", policy.CUDA,
			Shard{Setup: 20, Tests: 100 + 42 + 300, Seconds: 462, FromHistory: 2, FromEstTime: 1, SetupFrom: "stage"}},
		{"another backend's samples are not this one's; every stage's set-up", "stage-c-4-gpu-h200x", policy.CUDA,
			Shard{Setup: 25, Tests: 960, Seconds: 985, FromEstTime: 3, SetupFrom: "recorded"}},
		{"a ROCm shard of the same files", "stage-c-4-gpu-h200", policy.ROCM,
			Shard{Setup: 20, Tests: 960, Seconds: 980, FromEstTime: 3, SetupFrom: "stage"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := d.Shard(c.stage, c.backend, files); got != c.want {
				t.Errorf("wanted %+v, got %+v", c.want, got)
			}
		})
	}
	var none *Durations
	if got := none.Shard("s", policy.CPU, files[:1]); got != (Shard{Setup: DefaultSetup, Tests: 600, Seconds: 660, FromEstTime: 1, SetupFrom: "default"}) {
		t.Errorf("no history: wanted est_time and the default set-up, got %+v", got)
	}
	for _, w := range []string{"2 file(s) have runtime history", "4 recorded shard run(s) give set-ups for 2 stage(s)"} {
		if !strings.Contains(d.Found(), w) {
			t.Errorf("wanted %q in %q", w, d.Found())
		}
	}
}
