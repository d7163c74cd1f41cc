package estimate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultRepository is the repository the report's run links name when
// GITHUB_REPOSITORY is not set, as in update_est_time.py.
const DefaultRepository = "radixark/miles"

// Report is update_est_time.py's Markdown report, byte for byte: the
// window, then the changes' table with one link per run attempt, or the
// line saying none was needed. repository is OWNER/NAME for the links.
func Report(changes []Change, from, before time.Time, repository string) string {
	var b strings.Builder
	b.WriteString("# CI runtime estimate update\n\n")
	fmt.Fprintf(&b, "PASS samples from scheduled main runs in UTC window `[%s, %s)`; p90 uses at most %d samples and requires %d.\n\n",
		isoformat(from), isoformat(before), MaxSamples, MinSamples)
	if len(changes) == 0 {
		b.WriteString("No `est_time` changes were needed.\n")
		return b.String()
	}
	b.WriteString("| Test | Suite | Samples | p90 | Old | New | Run attempts |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | --- |\n")
	for _, c := range changes {
		runs := make([]string, len(c.RunAttempts))
		for i, r := range c.RunAttempts {
			runs[i] = fmt.Sprintf("[%d/%d](https://github.com/%s/actions/runs/%d/attempts/%d)", r.RunID, r.Attempt, repository, r.RunID, r.Attempt)
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %d | %.1fs | %ss | %ds | %s |\n",
			c.TestPath, c.Suite, c.Samples, c.P90, formatG(c.Old), c.New, strings.Join(runs, ", "))
	}
	return b.String()
}

// isoformat is Python's datetime.isoformat() of a UTC time with a tzinfo:
// 2026-07-22T00:00:00+00:00, with microseconds only when there are some.
func isoformat(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000+00:00")
	}
	return t.Format("2006-01-02T15:04:05+00:00")
}

// formatG is Python's format(x, "g"): six significant digits, trailing
// zeros dropped, an exponent of at least two digits.
func formatG(x float64) string {
	return strconv.FormatFloat(x, 'g', 6, 64)
}
