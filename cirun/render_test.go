package cirun

import (
	"strings"
	"testing"
)

// TestTextAttemptColumn: a re-run's table keeps its GPUs column in line
// whatever the attempt column holds, "reused (attempt 10)" included.
func TestTextAttemptColumn(t *testing.T) {
	r := &Report{Attempt: 11, Jobs: []JobReport{
		{Key: "pr-test/stage-b-2-gpu-h200", State: WouldRun, GPUs: 2, Attempt: 11},
		{Key: "pr-test/stage-c-4-gpu-h200", State: Passed, GPUs: 4, Attempt: 10, Reused: true},
		{Key: "pr-test/stage-c-8-gpu-h200", State: Passed, GPUs: 8, Attempt: 9, Reused: true},
	}}
	col := -1
	for _, l := range strings.Split(r.Text(), "\n") {
		if i := strings.Index(l, " GPUs"); i >= 0 {
			if col >= 0 && i != col {
				t.Errorf("the GPUs column is out of line (at %d, then %d):\n%s", col, i, r.Text())
			}
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no GPUs column in\n%s", r.Text())
	}
}
