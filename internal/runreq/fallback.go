package runreq

import (
	"strconv"

	"github.com/radixark/miles-ci/pipeline"
	"github.com/radixark/miles-ci/policy"
)

// containerPlanned is the request of a stage shard whose checkout miles-ci
// cannot plan offline (ahead names what it does not know, rules §11.7): the
// stage, cadence, labels and partition as usual, no offline plan, and the
// container's own run_suite.py --list-only as the plan the results report
// on, with one note saying so and why.
func containerPlanned(st policy.Stage, shards int, cadence policy.Cadence, labels []string, matchAll bool, id int, ahead *policy.AheadError) pipeline.Request {
	r := planRequest(st, shards, cadence, labels, matchAll, id)
	plan := &policy.Plan{HW: r.HW, Suite: r.Suite, Cadence: r.Cadence, Partition: r.Partition,
		IncludeLabels: []string{}, Enabled: []policy.PlannedTest{}, Skipped: []policy.SkippedTest{}}
	where := ahead.File
	if ahead.Line > 0 {
		where += ":" + strconv.Itoa(ahead.Line)
	}
	why := "miles-ci's offline plan was not available (" + where + ": " + ahead.Error() + ")"
	return pipeline.Request{Stage: st, Plan: plan, Labels: labels, MatchAllLabels: matchAll, PlanUnavailable: why,
		Notes: []string{why + "; the container's own run_suite.py --list-only is the plan"}}
}
