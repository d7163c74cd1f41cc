// Package metricgate is Miles' metric-history gate (rules §16) as data: a
// test file's register_ci_gate declarations read from its source, the
// merged metric record a passing attempt leaves, and the verdict of each
// coordinate against the mean of its trusted history, exactly as the
// checkout's tests/ci/metric_history gives them. It touches no store: the
// history comes through Baselines, which the callers implement (history's
// metric store, or none for a run without one).
package metricgate

import "slices"

func sortStrings(s []string) { slices.Sort(s) }
