package estimate

import (
	"fmt"
	"math"
)

// MaxSeconds caps an attempt's seconds and an est_time: 5 days, the
// longest one GitHub Actions job runs (on a self-hosted runner; GitHub's
// own end a job at 6 hours), and the longest --timeout-minutes lets a
// miles-ci run last (usecase.MaxTimeoutMinutes). An attempt is one test
// file inside one job, so no real attempt takes longer: a row of more is
// a broken or forged one (issue 38: 3,000,000 s, 34.7 days, passed the
// earlier bound of a workflow run's 35 days). Bucket of anything up to it
// is an exact positive integer that Miles' registry reads (float(est_time))
// and its updater could have written, and the single-file timeout of such
// an est_time (× 1.25, rules §10) stays under stagerun's cap.
const MaxSeconds = 5 * 24 * 60 * 60

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
		return fmt.Errorf("%s is %v, more than %d (5 days, the longest one GitHub Actions job runs)", what, s, MaxSeconds)
	}
	return nil
}
