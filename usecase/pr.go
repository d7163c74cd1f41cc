package usecase

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
)

// withPR fills the facts of in.PR that the caller did not give: the body
// (its ci-sglang-pr, ci-megatron-pr and ci-image-tag lines), the number and
// head SHA for GITHUB_COMMIT_NAME, and the fork flag. A fork PR stays one
// whatever the caller says, so it never gets secrets. Cadence and labels are
// decided in suite, for stage runs only.
func withPR(in Inputs) (Inputs, error) {
	pr := in.PR
	if pr == nil {
		return in, nil
	}
	if err := CheckPR(in); err != nil {
		return in, err
	}
	f := TriggerFacts{PRBody: in.PRBody, HeadSHA: in.HeadSHA, Fork: in.Fork}.FromPR(pr, in.Given)
	in.PRBody, in.HeadSHA, in.Fork = f.PRBody, f.HeadSHA, f.Fork
	if !in.Given.Number {
		in.PRNumber = strconv.Itoa(f.PRNumber)
	}
	return in, nil
}

// CheckPR refuses the inputs a pull request cannot go with: other trigger
// facts, and a release lockfile. Front ends call it before asking GitHub.
func CheckPR(in Inputs) error {
	for _, c := range []struct {
		set  bool
		flag string
	}{{in.Event != "", "--event"}, {in.Schedule != "", "--schedule"}, {in.PRLabelsJSON != "", "--pr-labels-json"}} {
		if c.set {
			return ConflictsWithPR(c.flag)
		}
	}
	if in.Release != nil {
		return ErrReleasePR
	}
	return nil
}

// ConflictsWithPR is the error of a trigger fact given with a pull request;
// flag names it as the caller gave it (e.g. --event).
func ConflictsWithPR(flag string) error {
	return fmt.Errorf("%s conflicts with --pr: the pull request is the trigger (event pull_request with its labels); give one or the other", flag)
}

// ErrReleasePR is a pull request given to a release run.
var ErrReleasePR = errors.New("a release run takes no pull request: its refs and image come from the lockfile; drop --pr")

// PRPolicy is the run policy the workflow resolves on the pull request
// (its cadence and raw labels), with the checkout's tables.
func PRPolicy(pr *github.PR, tables *policy.Tables) (policy.WorkflowPolicy, error) {
	trig := pr.Trigger()
	trig.Tables = tables
	return policy.ResolveTrigger(trig)
}

// skippedOnPR says, when CI would skip the stage on the pull request (its
// skipped_stages, rules §4), that it does and why; "" when CI runs it. The
// run goes ahead as asked: the gate is the workflow's, not the stage's.
func skippedOnPR(reg *policy.Registry, pr *github.PR, st policy.Stage) (string, error) {
	if !st.SkipGated {
		return "", nil
	}
	wp, err := PRPolicy(pr, reg.Tables)
	if err != nil {
		return "", err
	}
	sel, _, err := SelectStages(reg, wp, pr)
	if err != nil {
		return "", err
	}
	for _, v := range policy.StageVerdicts(wp, &sel, []policy.Stage{st}) {
		if !v.Runs {
			return fmt.Sprintf("CI skips %s on %s (rules §4: %s); it runs here because it was asked for", st.Name, pr.Ref(), v.Why), nil
		}
	}
	return "", nil
}
