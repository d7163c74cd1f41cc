package estimate

import (
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/policy"
)

var id = Identity{TestPath: "tests/e2e/test_x.py", Backend: "CUDA", Suite: "stage-c-8-gpu-h100"}

func sample(elapsed float64, day int, run int64, attempt int) Sample {
	return Sample{Identity: id, ElapsedS: elapsed, RunID: run, RunAttempt: attempt, TestAttempt: 1,
		RecordedAt: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, day)}
}

func TestPercentileAndBucket(t *testing.T) {
	p, err := Percentile([]float64{30, 10, 20}, 0.9)
	if err != nil || p < 27.999 || p > 28.001 {
		t.Errorf("wanted 28, got %v (%v)", p, err)
	}
	for _, tc := range []struct {
		in   float64
		want int
	}{{0, 10}, {28, 30}, {200, 200}, {200.5, 300}, {201, 300}, {199.9, 200}, {1001, 1100}} {
		if got := Bucket(tc.in); got != tc.want {
			t.Errorf("Bucket(%v): wanted %d, got %d", tc.in, tc.want, got)
		}
	}
	if _, err := Percentile(nil, 0.9); err == nil {
		t.Error("wanted an error for no values")
	}
}

func TestBuild(t *testing.T) {
	t.Run("fewer than three samples", func(t *testing.T) {
		if got := Build([]Sample{sample(10, 1, 1, 1), sample(20, 2, 2, 1)}); len(got) != 0 {
			t.Errorf("wanted no estimate, got %v", got)
		}
	})
	t.Run("three samples", func(t *testing.T) {
		got := Build([]Sample{sample(10, 1, 1, 1), sample(20, 2, 2, 1), sample(30, 3, 3, 1)})[id]
		if got.EstTime != 30 || got.Samples != 3 {
			t.Errorf("wanted 30 from 3 samples, got %+v", got)
		}
	})
	t.Run("the newest fifteen", func(t *testing.T) {
		var s []Sample
		for d := 1; d <= 15; d++ {
			s = append(s, sample(10, d, int64(d), 1))
		}
		s = append(s, sample(10000, 0, 99, 1))
		got := Build(s)[id]
		if got.Samples != 15 || got.P90 != 10 {
			t.Errorf("wanted 15 samples of p90 10, got %+v", got)
		}
		for _, r := range got.RunAttempts {
			if r.RunID == 99 {
				t.Errorf("the oldest sample counted: %+v", got.RunAttempts)
			}
		}
	})
	t.Run("run attempts newest first, each once", func(t *testing.T) {
		got := Build([]Sample{sample(10, 1, 7, 1), sample(20, 2, 7, 2), sample(30, 3, 8, 1), sample(30, 3, 8, 1)})[id]
		want := []RunAttempt{{8, 1}, {7, 2}, {7, 1}}
		if len(got.RunAttempts) != len(want) {
			t.Fatalf("wanted %v, got %v", want, got.RunAttempts)
		}
		for i := range want {
			if got.RunAttempts[i] != want[i] {
				t.Errorf("wanted %v, got %v", want, got.RunAttempts)
			}
		}
	})
	t.Run("ties on recorded_at keep the store's order", func(t *testing.T) {
		// 16 samples at one instant: run id decides, then the store's order.
		var s []Sample
		for i := 0; i < 16; i++ {
			x := sample(float64(100+i), 1, 5, 1)
			x.TestAttempt = 16 - i
			s = append(s, x)
		}
		got := Build(s)[id]
		if got.Samples != 15 || got.P90 < 112.599 || got.P90 > 112.601 {
			t.Errorf("wanted the first 15 as given (p90 112.6), got %+v", got)
		}
	})
}

func TestWindow(t *testing.T) {
	from, before := Window(time.Date(2026, 8, 12, 15, 0, 0, 0, time.UTC))
	if isoformat(from) != "2026-07-22T00:00:00+00:00" || isoformat(before) != "2026-08-12T00:00:00+00:00" {
		t.Errorf("wanted [2026-07-22, 2026-08-12), got [%s, %s)", isoformat(from), isoformat(before))
	}
}

func sites(t *testing.T, rel, src string) []policy.EstTimeSite {
	t.Helper()
	s, err := (*policy.Tables)(nil).EstTimeSites(rel, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRewriteFile(t *testing.T) {
	const rel = "tests/e2e/test_x.py"
	est := func(n int) Estimate {
		return Estimate{Samples: 3, P90: float64(n) - 2, EstTime: n, RunAttempts: []RunAttempt{{1, 1}}}
	}
	h100 := Identity{rel, "CUDA", "stage-c-8-gpu-h100"}
	h200 := Identity{rel, "CUDA", "stage-c-8-gpu-h200"}
	for _, tc := range []struct {
		name, src, want, err string
		estimates            map[Identity]Estimate
		changes              int
	}{
		{name: "keyword and positional, other bytes kept",
			src: "from tests.ci.ci_register import register_cpu_ci, register_cuda_ci\r\n" +
				"label = \"中文\"; register_cuda_ci(est_time=60, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\r\n" +
				"register_cuda_ci((70.0), \"stage-c-8-gpu-h200\", labels=[\"megatron\"])  # 70\n" +
				"register_cpu_ci(est_time=60, suite=\"stage-a-cpu\", labels=[])\n",
			want: "from tests.ci.ci_register import register_cpu_ci, register_cuda_ci\r\n" +
				"label = \"中文\"; register_cuda_ci(est_time=90, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\r\n" +
				"register_cuda_ci((120), \"stage-c-8-gpu-h200\", labels=[\"megatron\"])  # 70\n" +
				"register_cpu_ci(est_time=60, suite=\"stage-a-cpu\", labels=[])\n",
			estimates: map[Identity]Estimate{h100: est(90), h200: est(120), {rel, "CPU", "stage-a-cpu"}: est(90)}, changes: 2},
		{name: "a disabled registration sharing the identity",
			src:       "register_cuda_ci(est_time=60, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"], disabled=\"flaky\")\nregister_cuda_ci(est_time=70, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\n",
			want:      "register_cuda_ci(est_time=60, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"], disabled=\"flaky\")\nregister_cuda_ci(est_time=90, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\n",
			estimates: map[Identity]Estimate{h100: est(90)}, changes: 1},
		{name: "already current", src: "register_cuda_ci(est_time=90.0, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\n",
			want: "register_cuda_ci(est_time=90.0, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\n", estimates: map[Identity]Estimate{h100: est(90)}},
		{name: "parentheses over lines around a one-line literal", src: "register_cuda_ci(est_time=(\n6\n), suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\n",
			want: "register_cuda_ci(est_time=(\n90\n), suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\n", estimates: map[Identity]Estimate{h100: est(90)}, changes: 1},
		{name: "two active registrations", src: "register_cuda_ci(est_time=60, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\nregister_cuda_ci(est_time=70, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\n",
			estimates: map[Identity]Estimate{h100: est(90)}, err: "expected exactly one active CUDA registration for suite stage-c-8-gpu-h100; found 2"},
		{name: "only a disabled registration", src: "register_cuda_ci(est_time=60, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"], disabled=\"x\")\n",
			estimates: map[Identity]Estimate{h100: est(90)}, err: "found 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changes, err := RewriteFile(rel, []byte(tc.src), sites(t, rel, tc.src), tc.estimates, DefaultScope)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("wanted an error with %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("wanted %q, got %q", tc.want, got)
			}
			if len(changes) != tc.changes {
				t.Errorf("wanted %d changes, got %+v", tc.changes, changes)
			}
		})
	}
}

// TestRewriteFileMultiLine: a numeric literal cannot span lines in valid
// Python, so the error is defensive, as in Miles; a site says it.
func TestRewriteFileMultiLine(t *testing.T) {
	const rel = "tests/e2e/test_x.py"
	src := "register_cuda_ci(est_time=60, suite=\"stage-c-8-gpu-h100\", labels=[\"megatron\"])\n"
	s := sites(t, rel, src)
	s[0].MultiLine = true
	_, _, err := RewriteFile(rel, []byte(src), s, map[Identity]Estimate{{rel, "CUDA", "stage-c-8-gpu-h100"}: {EstTime: 90}}, DefaultScope)
	if err == nil || err.Error() != "tests/e2e/test_x.py:1: est_time literal spans multiple lines; write it on one line" {
		t.Errorf("wanted the multi-line error, got %v", err)
	}
}

func TestTargets(t *testing.T) {
	regs := []policy.Registration{
		{File: "tests/e2e/a/test_a.py", Backend: policy.CUDA, Suite: "s1", EstTime: 60},
		{File: "tests/e2e/a/test_b.py", Backend: policy.ROCM, Suite: "s2", EstTime: 60},
		{File: "tests/fast-gpu/test_c.py", Backend: policy.CUDA, Suite: "s1", EstTime: 60},
	}
	est := map[Identity]Estimate{
		{"tests/e2e/a/test_a.py", "CUDA", "s1"}: {EstTime: 90}, {"tests/e2e/a/test_b.py", "ROCM", "s2"}: {EstTime: 90},
		{"tests/fast-gpu/test_c.py", "CUDA", "s1"}: {EstTime: 90},
	}
	files, _, err := Targets(regs, est, DefaultScope)
	if err != nil || strings.Join(files, ",") != "tests/e2e/a/test_a.py" {
		t.Errorf("wanted only the CUDA file under tests/e2e, got %v %v", files, err)
	}
	files, _, _ = Targets(regs, est, Scope{Backends: []policy.Backend{policy.CUDA, policy.ROCM}})
	if strings.Join(files, ",") != "tests/e2e/a/test_a.py,tests/e2e/a/test_b.py" {
		t.Errorf("wanted ROCm too, got %v", files)
	}
	if _, _, err := Targets(append(regs, regs[0]), est, DefaultScope); err == nil || !strings.Contains(err.Error(), "duplicate active CUDA CI runtime identity") {
		t.Errorf("wanted the duplicate identity error, got %v", err)
	}
}

func TestReport(t *testing.T) {
	from, before := Window(time.Date(2026, 8, 12, 0, 0, 0, 0, time.UTC))
	none := Report(nil, from, before, DefaultRepository)
	if none != "# CI runtime estimate update\n\nPASS samples from scheduled main runs in UTC window `[2026-07-22T00:00:00+00:00, 2026-08-12T00:00:00+00:00)`; p90 uses at most 15 samples and requires 3.\n\nNo `est_time` changes were needed.\n" {
		t.Errorf("got %q", none)
	}
	got := Report([]Change{{TestPath: "tests/e2e/test_x.py", Suite: "stage-c-8-gpu-h100", Old: 60, New: 90,
		Estimate: Estimate{Samples: 3, P90: 88, EstTime: 90, RunAttempts: []RunAttempt{{123, 1}, {123, 2}}}}}, from, before, "radixark/miles")
	want := "| `tests/e2e/test_x.py` | `stage-c-8-gpu-h100` | 3 | 88.0s | 60s | 90s | [123/1](https://github.com/radixark/miles/actions/runs/123/attempts/1), [123/2](https://github.com/radixark/miles/actions/runs/123/attempts/2) |\n"
	if !strings.HasSuffix(got, "| Test | Suite | Samples | p90 | Old | New | Run attempts |\n| --- | --- | ---: | ---: | ---: | ---: | --- |\n"+want) {
		t.Errorf("got %q", got)
	}
}
