package estimate

import (
	"fmt"
	"math"
)

// MaxSeconds caps an attempt's seconds and an est_time: 35 days, the
// longest a GitHub Actions workflow run lasts, so no real attempt takes
// longer. Bucket of anything up to it is an exact positive integer that
// Miles' registry reads (float(est_time)) and its updater could have
// written; beyond it the rounding overflowed (issue 31: est_time=-2^63
// from rows of 1e308 seconds).
const MaxSeconds = 35 * 24 * 60 * 60

// CheckSeconds is the attempt rule's number half, for the seconds named
// what: finite, not negative (positive when positive is set, as
// estimated_seconds is) and at most MaxSeconds.
func CheckSeconds(what string, s float64, positive bool) error {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return fmt.Errorf("%s is %v, not a number of seconds", what, s)
	case s < 0 || positive && s == 0:
		if positive {
			return fmt.Errorf("%s is %v; it must be more than 0", what, s)
		}
		return fmt.Errorf("%s is %v; it must not be negative", what, s)
	case s > MaxSeconds:
		return fmt.Errorf("%s is %v, more than %d (35 days, the longest a GitHub Actions run lasts)", what, s, MaxSeconds)
	}
	return nil
}
