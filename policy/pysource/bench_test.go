package pysource

import (
	"fmt"
	"strings"
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
