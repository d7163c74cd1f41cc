package policy

import (
	"fmt"
	"slices"
	"strings"
)

// StageVerdict is whether one stage runs, and why.
type StageVerdict struct {
	Stage Stage
	Runs  bool
	Why   string
}

// StageVerdicts decides, for every stage of roster that Miles' workflows run,
// whether it runs under pol and why (rules §4): sel is the PR's stage selection,
// nil outside pull_request. The step summary and a stage run's "CI skips this
// stage" note both read these verdicts.
func StageVerdicts(pol WorkflowPolicy, sel *StageSelection, roster []Stage) []StageVerdict {
	var out []StageVerdict
	for _, st := range roster {
		if st.External {
			continue
		}
		v := StageVerdict{Stage: st, Runs: true, Why: "runs on every trigger"}
		switch {
		case !st.SkipGated:
			// No skipped-stage gate: the policy cannot skip this job.
		case sel == nil:
			v.Why = "GPU stages are pruned on pull requests only"
		case sel.DiffUnusable != "" && !sel.SkipsUnrunnable:
			v.Why = "the diff is unusable (" + sel.DiffUnusable + "), so no GPU stage is skipped"
		case !slices.Contains(sel.Runnable, st.Name):
			v.Runs, v.Why = false, fmt.Sprintf("no enabled test of it is selected by cadence %s and labels %s", pol.Cadence, labelText(pol.RawLabels))
		case !slices.Contains(sel.Affected, st.Name):
			v.Runs, v.Why = false, "no changed file touches its tests, and no label asks for it"
		case sel.DiffUnusable != "":
			v.Why = "it has selected tests, and the diff is unusable (" + sel.DiffUnusable + "), so every selected stage counts as affected"
		default:
			v.Why = "it has selected tests and the PR touches them (or a label asks for it)"
		}
		if sel != nil && st.SkipGated && slices.Contains(sel.Skipped, st.Name) {
			v.Runs = false
		}
		if v.Runs && st.FastFailGated {
			if pol.BypassFastfail {
				v.Why += "; runs even if stage-a-cpu fails (bypass_fastfail)"
			} else {
				v.Why += "; only after stage-a-cpu passes"
			}
		}
		out = append(out, v)
	}
	return out
}

// labelText is a label list as the verdicts quote it.
func labelText(labels []string) string {
	if len(labels) == 0 {
		return "(none)"
	}
	return "[" + strings.Join(labels, " ") + "]"
}
