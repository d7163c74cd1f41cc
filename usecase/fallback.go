package usecase

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/radixark/miles-ci/deps"

	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
)

// containerPlanned is the request of a stage shard whose checkout miles-ci
// cannot plan offline (ahead names what it does not know, rules §11.7): the
// stage, cadence, labels and partition as usual, no offline plan, and the
// container's own run_suite.py --list-only as the plan the results report
// on, with one note saying so and why.
func containerPlanned(st policy.Stage, shards int, cadence policy.Cadence, labels []string, matchAll bool, id int, ahead *policy.AheadError) stagerun.Request {
	r := planRequest(st, shards, cadence, labels, matchAll, id)
	plan := &policy.Plan{HW: r.HW, Suite: r.Suite, Cadence: r.Cadence, Partition: r.Partition,
		IncludeLabels: []string{}, Enabled: []policy.PlannedTest{}, Skipped: []policy.SkippedTest{}}
	where := ahead.File
	if ahead.Line > 0 {
		where += ":" + strconv.Itoa(ahead.Line)
	}
	why := "miles-ci's offline plan was not available (" + where + ": " + ahead.Error() + ")"
	return stagerun.Request{Stage: st, Plan: plan, Labels: labels, MatchAllLabels: matchAll, PlanUnavailable: why,
		Notes: []string{why + "; the container's own run_suite.py --list-only is the plan"}}
}

// checkoutFilePlan is the single-file plan of a checkout miles-ci cannot
// plan offline (ahead): the checkout's own file_run answers, run with
// in.Python (else python3 on PATH), with a note saying so and why. Without a
// Python, the error says what miles-ci does not know and that a Python
// would plan it.
func checkoutFilePlan(in Inputs, ahead *policy.AheadError) (deps.FilePlan, []string, error) {
	var c *Checkout
	var err error
	if in.Python != nil {
		c, err = OpenCheckout(in.Repo, in.Python)
	} else {
		c, err = NewCheckout(in.Repo, "")
	}
	if err != nil {
		return deps.FilePlan{}, nil, fmt.Errorf("%w; and the checkout's own file_run cannot plan it either: %v", ahead, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	fp, _, err := c.FilePlan(ctx, in.File, in.ImageTag, in.PRBody)
	if err != nil {
		return deps.FilePlan{}, nil, err
	}
	fp.ImageSource = deps.Source("checkout")
	where := ahead.File
	if ahead.Line > 0 {
		where += ":" + strconv.Itoa(ahead.Line)
	}
	return fp, []string{"miles-ci's offline plan was not available (" + where + ": " + ahead.Error() + "); the checkout's own tests/ci/file_run.py planned the file"}, nil
}
