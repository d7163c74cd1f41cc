package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
)

// writeBenchTree writes a Miles-sized tree: ~400 test files, ~3 MB of Python
// with docstrings, comments, nested data and functions around the calls.
// With hardware set, every register_cuda_ci names its GPU generations, as
// under the GPU-generation rules (rules §11.2).
func writeBenchTree(tb testing.TB, root string, hardware bool) (files int, bytes int) {
	tb.Helper()
	body := strings.Repeat(`
def helper_%[1]d(x, y=(1, 2, [3, {"k": 'v'}])):
    """A docstring that mentions register(1, "x") but is only text."""
    s = f"{x!r} and {y}"  # a comment with "quotes" and (brackets
    return [i * 2 for i in range(10) if i %% 3] + list(y)

`, 25)
	roots := []string{"tests/fast", "tests/fast-gpu/unit", "tests/e2e/megatron", "tests/e2e/sglang", "tests/ci"}
	suites := []string{"stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200", "stage-b-2-gpu-h200"}
	for i := 0; i < 400; i++ {
		dir := roots[i%len(roots)]
		var reg string
		switch {
		case dir == "tests/fast":
			reg = "" // implicit
		case dir == "tests/ci":
			reg = fmt.Sprintf("register_cpu_ci(est_time=%d, suite=\"stage-b-cpu\")\n", 5+i%17)
		default:
			arches := ""
			if hardware {
				arches = "    hardware=[\"hopper\", \"blackwell\"],\n"
			}
			reg = fmt.Sprintf("register_cuda_ci(\n    est_time=%d,\n    suite=%q,\n    labels=[%q],\n    nightly=%s,\n%s)\nregister_rocm_ci(est_time=%d.5, suite=\"stage-c-4-gpu-mi350\", labels=[\"amd\"])\n",
				60+i*7%900, suites[i%len(suites)], KnownLabels[i%len(KnownLabels)], map[bool]string{true: "True", false: "False"}[i%9 == 0], arches, 100+i)
		}
		src := "import os\nimport pytest\n\n" + reg + fmt.Sprintf(body, i) + "\nif __name__ == \"__main__\":\n    pytest.main([__file__])\n"
		p := filepath.Join(root, filepath.FromSlash(fmt.Sprintf("%s/test_case_%03d.py", dir, i)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			tb.Fatal(err)
		}
		files++
		bytes += len(src)
	}
	return files, bytes
}

// copyTables copies testdata/miles' table files (labels.py, stage_selection.py,
// ci_policy.py, the PR workflows) into root, with a run_suite.py of its own.
func copyTables(tb testing.TB, root string) {
	tb.Helper()
	files := map[string]string{RunSuiteFile: "CI_SUITES = {\n    HWBackend.CPU: [\"stage-a-cpu\", \"stage-b-cpu\"],\n" +
		"    HWBackend.CUDA: [\"stage-b-2-gpu-h200\", \"stage-c-8-gpu-h100\", \"stage-c-8-gpu-h200\", \"stage-c-4-gpu-h200\", \"stage-c-2-gpu-h200\"],\n" +
		"    HWBackend.ROCM: [\"stage-c-4-gpu-mi350\", \"nightly-stage-c-8-gpu-mi350\", \"nightly-stage-c-4-gpu-mi350\", \"nightly-stage-c-2-gpu-mi350\"],\n}\n"}
	for _, rel := range []string{LabelsFile, StageSelectionFile, CIPolicyFile, PRTestWorkflow, PRTestROCmWorkflow, ".github/workflows/_run-cpu-ci.yml"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "miles", filepath.FromSlash(rel)))
		if err != nil {
			tb.Fatal(err)
		}
		files[rel] = string(data)
	}
	for rel, content := range files {
		testfiles.Write(tb, root, rel, content)
	}
}

// gpuGenerationTables is a tests/ci/hardware.py in the GPU-generation form
// (rules §11.1): the arches in auto-preference order and every CUDA stage.
const gpuGenerationTables = `KNOWN_ARCHES = ("hopper", "blackwell")

CUDA_STAGES = {
    "stage-b-2-gpu-h200": CudaStage("hopper", 2, ("h200", "2gpu")),
    "stage-c-8-gpu-h100": CudaStage("hopper", 8, ("h100", "8gpu")),
    "stage-c-8-gpu-h200": CudaStage("hopper", 8, ("h200", "8gpu")),
    "stage-c-4-gpu-h200": CudaStage("hopper", 4, ("h200", "4gpu")),
    "stage-c-2-gpu-h200": CudaStage("hopper", 2, ("h200", "2gpu")),
    "stage-c-8-gpu-b200": CudaStage("blackwell", 8, ("b200", "8gpu")),
}
`

// BenchmarkPlan measures one suite's plan on a Miles-sized tree: reading the
// CI tables, discovery, parsing every file, selection and sharding. The
// builtin-tables case is a tree without table files (as before the tables
// were read); checkout-tables has every table file of testdata/miles (the
// 31f1ca9 rules); gpu-generation adds a tests/ci/hardware.py and a
// hardware= list to every register_cuda_ci (rules §11).
func BenchmarkPlan(b *testing.B) {
	for _, c := range []struct {
		name             string
		tables, hardware bool
	}{
		{name: "builtin-tables"},
		{name: "checkout-tables", tables: true},
		{name: "gpu-generation", tables: true, hardware: true},
	} {
		b.Run(c.name, func(b *testing.B) {
			root := b.TempDir()
			n, size := writeBenchTree(b, root, c.hardware)
			if c.tables {
				copyTables(b, root)
			}
			if c.hardware {
				testfiles.Write(b, root, "tests/ci/hardware.py", gpuGenerationTables)
			}
			b.ReportMetric(float64(n), "files")
			b.ReportMetric(float64(size)/1e6, "MB")
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				reg, err := LoadRegistry(root)
				if err != nil {
					b.Fatal(err)
				}
				if c.tables && reg.Tables.Origin(TableRoster).Builtin() {
					b.Fatal("the tables were not read")
				}
				if c.hardware && reg.Tables.Rules != RulesGPUGen {
					b.Fatal("the GPU-generation rules were not chosen")
				}
				if _, err := BuildPlan(reg, PlanRequest{HW: CUDA, Suite: "stage-c-4-gpu-h200", Cadence: Nightly, Partition: &Partition{ID: 1, Size: 3}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlanCheckout is BenchmarkPlan on a real Miles checkout, named by
// MILES_CI_BENCH_CHECKOUT (e.g. an archive of radixark/miles at 31f1ca9):
// what miles-ci plan --hw cuda --suite stage-c-4-gpu-h200
// --match-all-labels does there after process start. Bytes are those of the
// test files.
func BenchmarkPlanCheckout(b *testing.B) {
	root := os.Getenv("MILES_CI_BENCH_CHECKOUT")
	if root == "" {
		b.Skip("set MILES_CI_BENCH_CHECKOUT to the folder of a Miles checkout")
	}
	reg, err := LoadRegistry(root)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, f := range reg.Files {
		st, err := os.Stat(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	b.ReportMetric(float64(len(reg.Files)), "files")
	b.SetBytes(size)
	for b.Loop() {
		reg, err := LoadRegistry(root)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := BuildPlan(reg, PlanRequest{HW: CUDA, Suite: "stage-c-4-gpu-h200", Cadence: Nightly, MatchAllLabels: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadTables measures reading every table file alone.
func BenchmarkLoadTables(b *testing.B) {
	root := b.TempDir()
	copyTables(b, root)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := LoadTables(root); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadTablesCheckout measures LoadTables alone on the Miles
// checkout at $MILES_CI_BENCH_CHECKOUT: the part of a plan that runs beside
// the parse of the test files.
func BenchmarkLoadTablesCheckout(b *testing.B) {
	root := os.Getenv("MILES_CI_BENCH_CHECKOUT")
	if root == "" {
		b.Skip("set MILES_CI_BENCH_CHECKOUT to the folder of a Miles checkout")
	}
	for b.Loop() {
		if _, err := LoadTables(root); err != nil {
			b.Fatal(err)
		}
	}
}
