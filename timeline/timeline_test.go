package timeline

import (
	"reflect"
	"testing"
)

func TestCompute(t *testing.T) {
	jobs := []Job{{ID: "policy"}, {ID: "cpu", Needs: []string{"policy"}}, {ID: "image", Needs: []string{"policy", "cpu"}},
		{ID: "gpu8", Needs: []string{"image"}}, {ID: "gpu2", Needs: []string{"image"}}, {ID: "skipped", Needs: []string{"cpu"}},
		{ID: "after-skipped", Needs: []string{"skipped"}}, {ID: "rocm", Needs: []string{"policy"}}}
	host8 := []Devices{{Host: "", Model: "", IDs: []string{"0", "1", "2", "3", "4", "5", "6", "7"}}}
	cases := []struct {
		name  string
		tasks []Task
		fleet []Devices
		want  Figures
	}{
		{
			name: "the GPU-seconds bind: two 8-GPU shards cannot overlap on 8 devices",
			tasks: []Task{
				{ID: "policy", Job: "policy", Start: 0, Seconds: 1},
				{ID: "cpu 1/2", Job: "cpu", Start: 1, Seconds: 10},
				{ID: "cpu 2/2", Job: "cpu", Start: 1, Seconds: 20},
				{ID: "image", Job: "image", Start: 21, Seconds: 1},
				{ID: "gpu8 1/2", Job: "gpu8", Start: 22, Seconds: 30, GPUs: 8, Devices: host8[0].IDs},
				{ID: "gpu8 2/2", Job: "gpu8", Start: 52, Seconds: 30, GPUs: 8, Devices: host8[0].IDs},
			},
			fleet: host8,
			want: Figures{Span: 82, LowerBound: 60, CriticalPath: 52, Path: []string{"policy", "cpu 2/2", "image", "gpu8 1/2"},
				Models: []ModelBound{{Model: "", GPUSeconds: 480, Devices: 8, Seconds: 60}}, Binds: "GPU-seconds", Ratio: 1.367,
				Usage: []Usage{{Devices: 8, UsedGPUh: 0.133, IdleGPUh: 0.049}}, Fleet: host8},
		},
		{
			name: "the critical path binds; a job with no task (skipped) passes its needs on",
			tasks: []Task{
				{ID: "policy", Job: "policy", Seconds: 2},
				{ID: "cpu", Job: "cpu", Start: 2, Seconds: 40},
				{ID: "after-skipped", Job: "after-skipped", Start: 42, Seconds: 5},
				{ID: "rocm", Job: "rocm", Start: 3, Seconds: 10, GPUs: 2, Devices: []string{"0", "1"}},
			},
			fleet: host8,
			want: Figures{Span: 47, LowerBound: 47, CriticalPath: 47, Path: []string{"policy", "cpu", "after-skipped"},
				Models: []ModelBound{{Model: "", GPUSeconds: 20, Devices: 8, Seconds: 2.5}}, Binds: "critical path", Ratio: 1,
				Usage: []Usage{{Devices: 8, UsedGPUh: 0.006, IdleGPUh: 0.099}}, Fleet: host8},
		},
		{
			name: "After chains a pool's batches; stand-ins without ids bound no GPU time",
			tasks: []Task{
				{ID: "b1", Job: "gpu8", Seconds: 10, GPUs: 8, Model: "b200"},
				{ID: "b2", Job: "gpu8", Start: 10, Seconds: 10, GPUs: 8, Model: "b200", After: []string{"b1"}},
			},
			want: Figures{Span: 20, LowerBound: 20, CriticalPath: 20, Path: []string{"b1", "b2"}, Binds: "critical path", Ratio: 1},
		},
		{
			name: "each model over its own devices; the larger binds",
			tasks: []Task{
				{ID: "h", Job: "gpu8", Seconds: 100, GPUs: 4, Model: "h200", Host: "a", Devices: []string{"0", "1", "2", "3"}},
				{ID: "m", Job: "gpu2", Seconds: 50, GPUs: 4, Model: "mi350", Host: "b", Devices: []string{"0", "1", "2", "3"}},
			},
			fleet: []Devices{{Host: "a", Model: "h200", IDs: []string{"0", "1", "2", "3"}}, {Host: "b", Model: "mi350", IDs: []string{"0", "1"}}},
			want: Figures{Span: 100, LowerBound: 100, CriticalPath: 100, Path: []string{"h"},
				Models: []ModelBound{{Model: "h200", GPUSeconds: 400, Devices: 4, Seconds: 100}, {Model: "mi350", GPUSeconds: 200, Devices: 2, Seconds: 100}},
				Binds:  "critical path", Ratio: 1,
				Usage: []Usage{{Host: "a", Model: "h200", Devices: 4, UsedGPUh: 0.111, IdleGPUh: 0}, {Host: "b", Model: "mi350", Devices: 2, UsedGPUh: 0.028, IdleGPUh: 0.028}},
				Fleet: []Devices{{Host: "a", Model: "h200", IDs: []string{"0", "1", "2", "3"}}, {Host: "b", Model: "mi350", IDs: []string{"0", "1"}}}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Compute(c.tasks, jobs, c.fleet)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("wanted\n%+v\ngot\n%+v", c.want, got)
			}
			if got.LowerBound > got.Span+1e-9 {
				t.Errorf("the lower bound %v exceeds the span %v of a schedule that ran", got.LowerBound, got.Span)
			}
		})
	}
}

func TestSentence(t *testing.T) {
	f := Figures{Span: 211, LowerBound: 181, CriticalPath: 95.5, Models: []ModelBound{{Model: "h200", GPUSeconds: 1448, Devices: 8, Seconds: 181}}, Binds: "h200 GPU-seconds", Ratio: 1.166}
	want := "span 211 s, lower bound 181 s (H200 1448 GPU-s over 8 devices = 181 s; critical path 96 s; h200 GPU-seconds binds): 1.17x"
	if got := f.Sentence(); got != want {
		t.Errorf("wanted %q, got %q", want, got)
	}
	// A run whose shards all ended not-run: its resolvers took 10 ms, and
	// "span 0.0 s, lower bound 0.0 s: 1.11x" said a ratio of two zeros.
	f = Figures{Span: 0.01, LowerBound: 0.009, CriticalPath: 0.009, Binds: "critical path", Ratio: 1.111}
	want = "span 0.0 s, lower bound 0.0 s (critical path 0.0 s; critical path binds)"
	if got := f.Sentence(); got != want {
		t.Errorf("wanted %q, got %q", want, got)
	}
}

func TestLanes(t *testing.T) {
	fleet := []Devices{{Host: "a", Model: "h200", IDs: []string{"0", "1"}}}
	tasks := []Task{
		{ID: "policy", Job: "policy", Seconds: 1},
		{ID: "cpu 1", Job: "cpu", Host: "a", Start: 1, Seconds: 5},
		{ID: "cpu 2", Job: "cpu", Host: "a", Start: 2, Seconds: 5},
		{ID: "cpu 3", Job: "cpu", Host: "a", Start: 6, Seconds: 1},
		{ID: "gpu", Job: "gpu", Host: "a", Start: 7, Seconds: 3, GPUs: 2, Devices: []string{"0", "1"}},
	}
	shard := func(t Task) bool { return t.Job != "policy" }
	var got []string
	for _, l := range Lanes(tasks, fleet, shard) {
		line := l.Host + "/" + l.Name + ":"
		for _, b := range l.Bars {
			line += " " + b.ID
		}
		got = append(got, line)
	}
	want := []string{"a/H200 0: gpu", "a/H200 1: gpu", "a/CPU 1: cpu 1 cpu 3", "a/CPU 2: cpu 2", "/miles-ci: policy"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wanted %q, got %q", want, got)
	}
}
