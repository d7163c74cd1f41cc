package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy/pysource"
)

// The B200 pool rules (rules §11.8) on testdata/miles-b200pool.

const poolRoot = "../testdata/miles-b200pool"

func poolRegistry(t *testing.T) *Registry {
	t.Helper()
	reg, err := LoadRegistry(poolRoot)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestPoolRules(t *testing.T) {
	reg := poolRegistry(t)
	tb := reg.Tables
	if tb.Rules != RulesB200Pool {
		t.Fatalf("wanted rules %q, got %q", RulesB200Pool, tb.Rules)
	}
	if got, want := tb.PoolSuites(), []string{"stage-c-4-gpu-b200", "stage-c-8-gpu-b200"}; !reflect.DeepEqual(got, want) {
		t.Errorf("wanted pool suites %q, got %q", want, got)
	}
	if tb.Forms.StageCapabilities {
		t.Errorf("the pool tree's CudaStage has no capabilities, got the capability form")
	}
	gpus := map[string]int{}
	for _, r := range reg.Registrations {
		if r.Backend == CUDA {
			gpus[r.File] = tb.RequiredGPUs(r)
		}
	}
	for file, want := range map[string]int{
		"tests/e2e/short/test_b200_one.py":          1, // num_gpus=1
		"tests/e2e/megatron/test_b200_eight.py":     8, // its home stage's count
		"tests/e2e/megatron/test_portable_four.py":  2,
		"tests/e2e/megatron/test_portable_eight.py": 8,
		"tests/e2e/long/test_b200_long.py":          4,
	} {
		if gpus[file] != want {
			t.Errorf("%s: wanted required_gpus %d, got %d", file, want, gpus[file])
		}
	}
	// A GPU-generation checkout whose _VALID_KWARGS lists num_gpus but that
	// has no pool planner stays ahead of miles-ci (TestAheadKeyword); with
	// tests/ci/b200_plan.py it takes the pool rules.
	files := map[string]string{}
	for _, f := range []string{HardwareFile, LabelsFile, CIRegisterFile, RunSuiteFile, StageSelectionFile, CIPolicyFile} {
		files[f] = string(mustRead(t, poolRoot+"/"+f))
	}
	withoutPlanner, err := LoadTables(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if withoutPlanner.Rules != RulesGPUGen {
		t.Errorf("without b200_plan.py: wanted rules %q, got %q", RulesGPUGen, withoutPlanner.Rules)
	}
	files[PoolPlannerFile] = "def plan_jobs():\n    pass\n"
	withPlanner, err := LoadTables(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if withPlanner.Rules != RulesB200Pool {
		t.Errorf("with b200_plan.py: wanted rules %q, got %q", RulesB200Pool, withPlanner.Rules)
	}
}

func TestPoolNumGPUsErrors(t *testing.T) {
	const imp = "from tests.ci.ci_register import register_cuda_ci, register_cpu_ci\n"
	for _, tc := range []struct{ name, call, want string }{
		{"zero", `register_cuda_ci(60, "stage-b-2-gpu-h200", labels=["megatron"], hardware=["hopper"], num_gpus=0)`,
			"num_gpus must be an integer from 1 to 8 in register_cuda_ci() (got 0)"},
		{"nine", `register_cuda_ci(60, "stage-b-2-gpu-h200", labels=["megatron"], hardware=["hopper"], num_gpus=9)`,
			"num_gpus must be an integer from 1 to 8 in register_cuda_ci() (got 9)"},
		{"bool", `register_cuda_ci(60, "stage-b-2-gpu-h200", labels=["megatron"], hardware=["hopper"], num_gpus=True)`,
			"num_gpus must be an integer from 1 to 8 in register_cuda_ci() (got True)"},
		{"None", `register_cuda_ci(60, "stage-b-2-gpu-h200", labels=["megatron"], hardware=["hopper"], num_gpus=None)`,
			"num_gpus must be an integer from 1 to 8 in register_cuda_ci() (got None)"},
		{"string", `register_cuda_ci(60, "stage-b-2-gpu-h200", labels=["megatron"], hardware=["hopper"], num_gpus="2")`,
			"num_gpus must be an integer from 1 to 8 in register_cuda_ci() (got '2')"},
		{"float", `register_cuda_ci(60, "stage-b-2-gpu-h200", labels=["megatron"], hardware=["hopper"], num_gpus=2.0)`,
			"num_gpus must be an integer from 1 to 8 in register_cuda_ci() (got 2.0)"},
		{"negative", `register_cuda_ci(60, "stage-b-2-gpu-h200", labels=["megatron"], hardware=["hopper"], num_gpus=-1)`,
			"num_gpus in register_cuda_ci() must be a literal constant"},
		{"over the home", `register_cuda_ci(60, "stage-b-2-gpu-h200", labels=["megatron"], hardware=["hopper"], num_gpus=4)`,
			"num_gpus=4 in register_cuda_ci() exceeds the home suite 'stage-b-2-gpu-h200', which has 2 GPUs"},
		{"CPU", `register_cpu_ci(1, "stage-a-cpu", num_gpus=1)`,
			"num_gpus is CUDA-only in register_cpu_ci(); CPU and ROCm tests take no GPU count"},
		{"hardware first", `register_cuda_ci(60, "stage-b-2-gpu-h200", labels=["megatron"], hardware=["ampere"], num_gpus=0)`,
			"unknown arches ['ampere'] in register_cuda_ci(); valid arches: ['hopper', 'blackwell']"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for _, f := range []string{HardwareFile, LabelsFile, CIRegisterFile, RunSuiteFile, StageSelectionFile, CIPolicyFile, PoolPlannerFile} {
				files[f] = string(mustRead(t, poolRoot+"/"+f))
			}
			files["tests/e2e/test_x.py"] = imp + tc.call + "\n"
			_, err := LoadRegistry(writeTree(t, files))
			re, ok := err.(*RegistryError)
			if !ok {
				t.Fatalf("wanted a registry error, got %v", err)
			}
			if re.Msg != tc.want {
				t.Errorf("wanted %q, got %q", tc.want, re.Msg)
			}
		})
	}
}

func TestPlanPool(t *testing.T) {
	reg := poolRegistry(t)
	files := func(p PoolPlan) []string {
		var out []string
		for _, j := range p.Jobs {
			out = append(out, strings.TrimPrefix(j.File, "tests/e2e/"))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		req     PoolRequest
		want    []string
		batches int
	}{
		{"no label: nothing", PoolRequest{Cadence: Regular}, nil, 0},
		{"home tests, est_time order", PoolRequest{Cadence: Regular, Labels: []string{"run-ci-short", "run-ci-megatron"}},
			[]string{"megatron/test_b200_eight.py", "short/test_b200_two.py", "short/test_b200_one.py"}, 1},
		{"run-on-blackwell absorbs Hopper tests at their own counts", PoolRequest{Cadence: Regular, Labels: []string{"run-ci-megatron", "run-on-blackwell"}},
			[]string{"megatron/test_b200_eight.py", "megatron/test_portable_eight.py", "megatron/test_portable_four.py"}, 1},
		{"one suite", PoolRequest{Suites: []string{"stage-c-4-gpu-b200"}, Cadence: Regular, Labels: []string{"run-ci-short"}},
			[]string{"short/test_b200_two.py", "short/test_b200_one.py"}, 1},
		{"weekly: nightly tests, two batches", PoolRequest{Cadence: Weekly},
			[]string{"long/test_b200_huge.py", "long/test_b200_long.py", "megatron/test_b200_eight.py", "short/test_b200_two.py", "short/test_b200_one.py"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlanPool(reg, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := files(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wanted jobs %q, got %q", tc.want, got)
			}
			if len(p.Batches) != tc.batches {
				t.Errorf("wanted %d batch(es), got %d", tc.batches, len(p.Batches))
			}
			if p.HasTests() != (len(tc.want) > 0) {
				t.Errorf("wanted has_tests %v", len(tc.want) > 0)
			}
		})
	}
	p, err := PlanPool(reg, PoolRequest{Cadence: Regular, Labels: []string{"run-ci-megatron", "run-on-blackwell"}})
	if err != nil {
		t.Fatal(err)
	}
	four := p.Jobs[2]
	if four.NumGPUs != 2 || !reflect.DeepEqual(four.RunsOn, []string{"b200", "2gpu"}) || four.Suite != "stage-c-4-gpu-b200" || four.TimeoutMinutes != 50 {
		t.Errorf("the 2-GPU portable test's job: %+v", four)
	}
	if _, err := PlanPool(reg, PoolRequest{Suites: []string{"stage-c-8-gpu-h200"}, Cadence: Regular}); err == nil ||
		err.Error() != "suite stage-c-8-gpu-h200 is not a B200 pool suite; the pool suites are stage-c-4-gpu-b200, stage-c-8-gpu-b200" {
		t.Errorf("wanted a refusal of a Hopper suite, got %v", err)
	}
	if _, err := PlanPool(gpugenRegistry(t), PoolRequest{Cadence: Regular}); err == nil || !strings.Contains(err.Error(), "has no B200 pool") {
		t.Errorf("wanted no pool on the GPU-generation tree, got %v", err)
	}
}

// TestPoolMatrixGolden: the matrix and $GITHUB_OUTPUT lines are byte for
// byte what Miles' b200_plan.py wrote on testdata/miles-b200pool for the same
// question (weekly, both suites; run once beside miles-ci, see
// docs/rulesets.md), which testdata/miles-b200pool/b200-weekly.golden holds.
func TestPoolMatrixGolden(t *testing.T) {
	p, err := PlanPool(poolRegistry(t), PoolRequest{Suites: []string{"stage-c-8-gpu-b200", "stage-c-4-gpu-b200"}, Cadence: Weekly})
	if err != nil {
		t.Fatal(err)
	}
	testfiles.Golden(t, "testdata/b200-weekly.golden", p.GitHubOutput())
}

func TestTimeoutsAndBatches(t *testing.T) {
	for est, want := range map[float64]int{0: 50, 1440: 50, 1800: 58, 21600: 470, 2400: 70} {
		if got := PoolTimeoutMinutes(est); got != want {
			t.Errorf("est_time %v: wanted %d minutes, got %d", est, want, got)
		}
	}
	job := func(file string, minutes int) PoolJob {
		return PoolJob{File: file, TimeoutMinutes: minutes, RunsOn: []string{"b200", "1gpu"}}
	}
	bs, err := BatchPool([]PoolJob{job("a", 1000), job("b", 380), job("c", 1), job("d", PoolMaxBatchMinutes)})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, b := range bs {
		var names []string
		for _, j := range b.Jobs {
			names = append(names, fmt.Sprintf("%s:%d", j.File, j.TimeoutMinutes))
		}
		got = append(got, names)
	}
	want := [][]string{{"a:1380", "b:1380"}, {"c:1"}, {"d:1380"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wanted batches %q, got %q", want, got)
	}
	if _, err := BatchPool([]PoolJob{job("tests/e2e/test_long.py", PoolMaxBatchMinutes+1)}); err == nil || !strings.HasPrefix(err.Error(), "B200 test exceeds batch budget: tests/e2e/test_long.py (1381 minutes") {
		t.Errorf("wanted the budget error, got %v", err)
	}
	if bs, err := BatchPool(nil); err != nil || len(bs) != 0 {
		t.Errorf("wanted no batch, got %v %v", bs, err)
	}
}

func TestShellQuoteAndJSON(t *testing.T) {
	for in, want := range map[string]string{
		"tests/e2e/test_a.py":                 "tests/e2e/test_a.py",
		"":                                    "''",
		"tests/e2e/test_quoted'$(touch x).py": `'tests/e2e/test_quoted'"'"'$(touch x).py'`,
		"a b":                                 "'a b'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q): wanted %q, got %q", in, want, got)
		}
	}
	for in, want := range map[string]string{
		`a"b\c`: `"a\"b\\c"`, "é\n": `"\u00e9\n"`, "\U0001F600": `"\ud83d\ude00"`, "\x7f": `"\u007f"`,
	} {
		if got := pysource.JSONString(in); got != want {
			t.Errorf("JSONString(%q): wanted %s, got %s", in, want, got)
		}
	}
}

func TestFileRunsOnOfPoolSuites(t *testing.T) {
	reg := poolRegistry(t)
	for _, r := range reg.Registrations {
		runsOn, ok := reg.Tables.FileRunsOn(r)
		switch r.File {
		case "tests/e2e/short/test_b200_two.py":
			if !ok || !reflect.DeepEqual(runsOn, []string{"b200", "2gpu"}) {
				t.Errorf("wanted [b200 2gpu], got %v %v", runsOn, ok)
			}
		case "tests/e2e/short/test_hopper_only.py":
			if ok {
				t.Errorf("a Hopper stage's runners are the roster's, got %v", runsOn)
			}
		}
	}

}

// TestPoolRoster: the roster of testdata/miles-b200pool as its pr-test.yml
// says: stage-b-cpu's four shards after stage-a-cpu, a shard matrix that
// depends on the cadence, and the two pool suites as rows of the one job
// stage-c-b200.
func TestPoolRoster(t *testing.T) {
	tb := poolRegistry(t).Tables
	stage := func(name string) Stage {
		st, ok := tb.Stage(name)
		if !ok {
			t.Fatalf("wanted a roster row %s", name)
		}
		return st
	}
	if b := stage("stage-b-cpu"); b.ShardsFor(Regular) != 4 || !slices.Contains(b.Needs, "stage-a-cpu") {
		t.Errorf("stage-b-cpu: wanted 4 shards after stage-a-cpu, got %d shards, needs %q", b.ShardsFor(Regular), b.Needs)
	}
	c4 := stage("stage-c-4-gpu-h200")
	for c, want := range map[Cadence]int{Regular: 1, Nightly: 2, Weekly: 2, Release: 2} {
		if got := c4.ShardsFor(c); got != want {
			t.Errorf("stage-c-4-gpu-h200 under %s: wanted %d shard(s), got %d", c, want, got)
		}
	}
	for _, s := range tb.PoolSuites() {
		if st := stage(s); st.Job != "stage-c-b200" || !st.SkipGated || st.ShardsFor(Regular) != 1 {
			t.Errorf("%s: wanted one gated row of job stage-c-b200, got %+v", s, st)
		}
	}
}
