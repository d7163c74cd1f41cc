package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBenchTree writes a Miles-sized tree: ~400 test files, ~3 MB of Python
// with docstrings, comments, nested data and functions around the calls.
func writeBenchTree(tb testing.TB, root string) (files int, bytes int) {
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
			reg = fmt.Sprintf("register_cuda_ci(\n    est_time=%d,\n    suite=%q,\n    labels=[%q],\n    nightly=%s,\n)\nregister_rocm_ci(est_time=%d.5, suite=\"stage-c-4-gpu-mi350\", labels=[\"amd\"])\n",
				60+i*7%900, suites[i%len(suites)], KnownLabels[i%len(KnownLabels)], map[bool]string{true: "True", false: "False"}[i%9 == 0], 100+i)
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

// BenchmarkPlan measures one suite's plan on a Miles-sized tree: discovery,
// parsing every file, selection and sharding.
func BenchmarkPlan(b *testing.B) {
	root := b.TempDir()
	n, size := writeBenchTree(b, root)
	b.ReportMetric(float64(n), "files")
	b.ReportMetric(float64(size)/1e6, "MB")
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		reg, err := LoadRegistry(root)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := BuildPlan(reg, PlanRequest{HW: CUDA, Suite: "stage-c-4-gpu-h200", Cadence: Nightly, Partition: &Partition{ID: 1, Size: 3}}); err != nil {
			b.Fatal(err)
		}
	}
}
