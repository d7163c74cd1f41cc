package report

import (
	"slices"
	"testing"
)

func TestOutputTail(t *testing.T) {
	log := "Running: python tests/ci/run_suite.py\n" +
		"::group::tests/a.py  (1/2 est=5s attempt=1)\nok a\n::endgroup::\n" +
		"[1/2] tests/a.py  PASS  elapsed=1s\n" +
		"::group::tests/b.py  (2/2 est=5s attempt=1)\nstarting b\nTraceback\nModuleNotFoundError: No module named 'torch'\x1b[31m\n::endgroup::\n" +
		"[2/2] tests/b.py  FAIL  elapsed=2s exit=1\n" +
		"Test Summary: 1/2 passed\n"
	tests := []struct {
		name, file string
		n          int
		want       []string
	}{
		{"the failed file's own lines", "tests/b.py", 12, []string{"starting b", "Traceback", `ModuleNotFoundError: No module named 'torch'\x1b[31m`}},
		{"its last n", "tests/b.py", 1, []string{`ModuleNotFoundError: No module named 'torch'\x1b[31m`}},
		{"no status line: the log's end", "tests/c.py", 2, []string{"[2/2] tests/b.py  FAIL  elapsed=2s exit=1", "Test Summary: 1/2 passed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := OutputTail(log, tc.file, tc.n); !slices.Equal(got, tc.want) {
				t.Errorf("wanted %q, got %q", tc.want, got)
			}
		})
	}
}
