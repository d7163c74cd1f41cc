package cirun

import (
	"fmt"
	"github.com/radixark/miles-ci/device"
	"strings"
	"testing"
	"time"
)

func TestBoardTable(t *testing.T) {
	zero, one := 0, 1
	var b Board
	b.Update(JobReport{Key: "pr-test/policy", State: Running})
	b.Update(JobReport{Key: "pr-test/policy", State: Passed, Reason: "cadence=regular"})
	b.Update(JobReport{Key: "pr-test/stage-a-cpu", Shard: &zero, Shards: 2, State: Running})
	b.Update(JobReport{Key: "pr-test/stage-a-cpu", Shard: &one, Shards: 2, State: Failed, Reason: "tests/fast/test_x.py fail (failed)"})
	b.Update(JobReport{Key: "pr-test/stage-c-4-gpu-h200", State: Queued, GPUs: 4})
	b.Update(JobReport{Key: "pr-test/stage-b-2-gpu-h200", State: Running, GPUs: 2, Devices: device.Set{"0", "1"}})
	b.Update(JobReport{Key: "pr-test/stage-c-8-gpu-h100", State: Skipped, Reason: "the policy skips it"})
	want := `miles-ci ci [  12s] 6 jobs: 2 running, 1 queued, 1 passed, 1 failed, 1 skipped
  pr-test/stage-a-cpu shard 1/2  running
  pr-test/stage-b-2-gpu-h200     running   GPUs 0,1
  pr-test/stage-c-4-gpu-h200     queued    4 GPUs
  pr-test/stage-a-cpu shard 2/2  failed                 tests/fast/test_x.py fail (failed)
`
	if got := b.Table(12*time.Second, 0); got != want {
		t.Errorf("wanted\n%s\ngot\n%s", want, got)
	}
	if got := b.Table(12*time.Second, 40); !strings.HasPrefix(got, "miles-ci ci [  12s] 6 jobs: 2 running, …\n") {
		t.Errorf("wanted the lines cut to 40 characters, got\n%s", got)
	}
	text, n := b.Redraw(0, time.Second, 0)
	if n != 5 || strings.Contains(text, "\x1b") {
		t.Errorf("wanted a first drawing of 5 lines with no cursor move, got %d lines %q", n, text)
	}
	text, _ = b.Redraw(n, time.Second, 0)
	if !strings.HasPrefix(text, "\x1b[5A\r\x1b[J") {
		t.Errorf("wanted the redraw to move up over the 5 lines and clear, got %q", text)
	}
	if Erase(0) != "" {
		t.Errorf("wanted nothing to erase before a drawing, got %q", Erase(0))
	}
}

func TestBoardRowsAreBounded(t *testing.T) {
	var b Board
	for i := range boardRows + 6 {
		b.Update(JobReport{Key: fmt.Sprintf("pr-test/stage-%02d", i), State: Queued})
	}
	got := b.Table(0, 0)
	if lines := strings.Count(got, "\n"); lines != boardRows+2 || !strings.Contains(got, "  ... and 6 more\n") {
		t.Errorf("wanted %d rows and a line for the 6 more, got %d lines\n%s", boardRows, lines, got)
	}
}
