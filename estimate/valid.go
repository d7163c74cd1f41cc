package estimate

import (
	"fmt"
	"math"
	"strconv"
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
			return fmt.Errorf("%s is %s; it must be more than 0", what, secondsText(s))
		}
		return fmt.Errorf("%s is %s; it must not be negative", what, secondsText(s))
	case s > MaxSeconds:
		return fmt.Errorf("%s is %s, more than %d (5 days, the longest one GitHub Actions job runs)", what, secondsText(s), MaxSeconds)
	}
	return nil
}

// secondsText writes a number of seconds as a person reads it (3000000, not
// %v's 3e+06), and in exponent form only where the digits would not fit on
// a line (1e+308).
func secondsText(s float64) string {
	if math.Abs(s) < 1e15 {
		return strconv.FormatFloat(s, 'f', -1, 64)
	}
	return strconv.FormatFloat(s, 'g', -1, 64)
}
