package report

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

// readFixture reads a file of testdata/ (logs in the shape Miles' own
// run_suite.py prints; see testdata/README.md).
func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// statusLog is what the run step keeps in status.log: the lines of run.log
// that start like a status line (stagerun's run script greps them so).
func statusLog(runLog string) string {
	start := regexp.MustCompile(`^\[[0-9]+/[0-9]+\] `)
	var keep []string
	for _, l := range strings.Split(runLog, "\n") {
		if start.MatchString(l) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestRealRunSuiteLogs reads run logs in the shape Miles' own runner prints
// in a stage container: status lines among ::group:: blocks, the runner's
// banners, test output (including a test line that looks like a status line
// and one left without a newline) and the summary block.
func TestRealRunSuiteLogs(t *testing.T) {
	t1800, t2400 := 1800, 2400
	for _, tc := range []struct {
		name, log string
		in        Input
		want      string
	}{
		{
			name: "cuda fail-fast",
			log:  "realrun-cuda-failfast.log",
			in: Input{HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", Shard: &policy.Partition{ID: 0, Size: 3}, Cadence: policy.Regular,
				Image: "radixark/miles:dev", Run: RunRecord{Ending: Exited, ExitCode: 255},
				Tests: []Expected{{"tests/e2e/megatron/test_train_dense.py", &t1800}, {"tests/e2e/megatron/test_train_moe.py", &t1800},
					{"tests/e2e/megatron/test_convert.py", &t1800}},
				Skipped: []policy.SkippedTest{{File: "tests/e2e/long/test_soak.py", Reason: "FIXME: needs 8 GPUs"}}},
			want: `stage-c-4-gpu-h200 shard 1/3 (cuda, radixark/miles:dev, cadence regular): FAILED (exit code 255)
  PASS     tests/e2e/megatron/test_train_dense.py  741s
  FAIL     tests/e2e/megatron/test_train_moe.py  288s  exit 1
  NOT-RUN  tests/e2e/megatron/test_convert.py
  SKIPPED  tests/e2e/long/test_soak.py  (FIXME: needs 8 GPUs)
`,
		},
		{
			name: "rocm retry",
			log:  "realrun-rocm-retry.log",
			in: Input{HW: policy.ROCM, Suite: "stage-c-4-gpu-mi350", Shard: &policy.Partition{ID: 1, Size: 2}, Cadence: policy.Regular,
				Image: "rocm/sgl-dev:miles-rocm720-mi35x", Run: RunRecord{Ending: Exited}, MaxAttempts: 2, Tests: []Expected{{"tests/e2e/amd/test_gsm8k.py", &t2400}}},
			want: `stage-c-4-gpu-mi350 shard 2/2 (rocm, rocm/sgl-dev:miles-rocm720-mi35x, cadence regular): passed
  PASS     tests/e2e/amd/test_gsm8k.py  810s  (2 attempts)
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := readFixture(t, tc.log)
			// The run step parses status.log; the whole run.log must read the same.
			for _, text := range []string{statusLog(log), log} {
				in := tc.in
				in.Run.StatusLines = strings.Split(text, "\n")
				if got := Summarize(in).Text(); got != tc.want {
					t.Errorf("wanted\n%s\ngot\n%s", tc.want, got)
				}
			}
		})
	}
}

// TestRealRunSuitePlans reads --list-only output in the shape Miles' own
// runner prints: a Policy line first, a Skipped block, the [implicit] mark,
// and the empty shard's three closing lines.
func TestRealRunSuitePlans(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"realplan-skipped.txt", []string{"tests/fast/test_args.py", "tests/fast/utils/test_misc.py"}},
		{"realplan-empty.txt", []string{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := ParseListOnly(readFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("wanted %q, got %q", tc.want, got)
			}
			if err := CheckPlan(got, tc.want); err != nil {
				t.Errorf("wanted no plan drift, got %v", err)
			}
		})
	}
}
