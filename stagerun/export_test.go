package stagerun

import "time"

// SetDeadlineGrace sets what the run's deadline adds to its timeout, for a
// test, and returns the old value.
func SetDeadlineGrace(d time.Duration) time.Duration {
	old := deadlineGrace
	deadlineGrace = d
	return old
}
