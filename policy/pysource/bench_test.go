package pysource

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// benchSource is a test file like those of a Miles checkout: registrations,
// then helpers with docstrings, f-strings, comprehensions and nested data.
func benchSource() string {
	body := strings.Repeat(`
def helper_%[1]d(x, y=(1, 2, [3, {"k": 'v'}])):
    """A docstring that mentions register(1, "x") but is only text."""
    s = f"{x!r} and {y}"  # a comment with "quotes" and (brackets
    return [i * 2 for i in range(10) if i %% 3] + list(y)

`, 25)
	return "import os\nimport pytest\n\nregister_cuda_ci(est_time=60, suite=\"stage-c-2-gpu-h200\", labels=[\"megatron\"])\n" +
		fmt.Sprintf(body, 1) + "\nif __name__ == \"__main__\":\n    pytest.main([__file__])\n"
}

// BenchmarkTopLevelCalls reads one test file: tokenizer, grammar and calls.
func BenchmarkTopLevelCalls(b *testing.B) {
	src := benchSource()
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		if _, err := TopLevelCalls(src, func(n string) bool { return strings.HasPrefix(n, "register_") }); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCorpus is a Miles-sized corpus: 400 test files, about 3 MB. Each is a
// helper-heavy file like benchSource followed by one of the accepted files of
// testdata/corpus, so the corpus holds every construct the reader checks.
func benchCorpus(b *testing.B) (files []string, size int64) {
	b.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.py"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no corpus files: %v", err)
	}
	var tails []string
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := TopLevelCalls(string(src), isRegister); err == nil {
			tails = append(tails, string(src))
		}
	}
	for i := 0; i < 400; i++ {
		src := strings.Replace(benchSource(), "helper_1", fmt.Sprintf("helper_%d", i), -1) + tails[i%len(tails)]
		files = append(files, src)
		size += int64(len(src))
	}
	return files, size
}

// BenchmarkParse reads a Miles-sized corpus (benchCorpus) as the planner
// does: serial on one goroutine, and parallel with one worker per core
// taking the next file, as policy.LoadRegistry does.
func BenchmarkParse(b *testing.B) {
	files, size := benchCorpus(b)
	parse := func(src string) {
		if _, err := TopLevelCalls(src, isRegister); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, src := range files {
				parse(src)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			var next atomic.Int64
			var wg sync.WaitGroup
			for w := 0; w < runtime.GOMAXPROCS(0); w++ {
				wg.Go(func() {
					for i := next.Add(1) - 1; i < int64(len(files)); i = next.Add(1) - 1 {
						parse(files[i])
					}
				})
			}
			wg.Wait()
		}
	})
}
