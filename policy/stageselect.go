package policy

import "slices"

// StageSelection explains which PR GPU stages a pull request runs (rules §4).
type StageSelection struct {
	// Runnable are the PR GPU stages with an enabled registration the run policy selects.
	Runnable []string `json:"runnable"`
	// Affected are the PR GPU stages the changed paths (plus explicit requests) touch.
	Affected []string `json:"affected"`
	// Skipped = PR GPU stages − (runnable ∩ affected), sorted.
	Skipped []string `json:"skipped"`
	// DiffUnusable says why the diff was ignored (no stage is skipped), or "".
	DiffUnusable string `json:"diff_unusable,omitempty"`
}

// SelectPRStages computes skipped_stages for a pull request. diff is the raw
// `git diff --name-status -z -M HEAD^1 HEAD` output (nil when missing).
func SelectPRStages(reg *Registry, wp WorkflowPolicy, diff []byte) (StageSelection, error) {
	t := reg.Tables
	prStages := t.PRGPUStages()
	rp, err := t.ResolveRunPolicy(wp.Cadence, wp.RawLabels, false)
	if err != nil {
		return StageSelection{}, err
	}
	inPR := func(suite string) bool { return slices.Contains(prStages, suite) }

	runnable := map[string]bool{}
	for _, r := range reg.Registrations {
		if r.Disabled == nil && inPR(r.Suite) && rp.Selects(r) {
			runnable[r.Suite] = true
		}
	}

	explicit := map[string]bool{}
	if sharesLabel(wp.RawLabels, t.or().BroadScopes) {
		for s := range runnable {
			explicit[s] = true
		}
	} else {
		requested, _ := t.RequestedLabels(wp.RawLabels)
		for _, r := range reg.Registrations {
			if r.Disabled == nil && inPR(r.Suite) && (!r.Nightly || rp.AdmitNightly) && sharesLabel(r.Labels, requested) {
				explicit[r.Suite] = true
			}
		}
	}

	affected := map[string]bool{}
	sel := StageSelection{}
	entries, err := ParseNameStatus(diff)
	if diff == nil {
		sel.DiffUnusable = "no changed-files input"
	} else if err != nil {
		sel.DiffUnusable = err.Error()
	}
	if sel.DiffUnusable != "" {
		// Fail open: an unusable diff skips no stage at all (rules §4).
		sel.Runnable, sel.Affected, sel.Skipped = sortedKeys(runnable), prStages, []string{}
		if sel.Runnable == nil {
			sel.Runnable = []string{}
		}
		return sel, nil
	}
	{
		suitesOf := map[string][]string{}
		for _, r := range reg.Registrations {
			suitesOf[r.File] = append(suitesOf[r.File], r.Suite)
		}
	entries:
		for _, e := range entries {
			for _, p := range e.Paths {
				if suites, ok := suitesOf[p]; ok {
					for _, s := range suites {
						if inPR(s) {
							affected[s] = true
						}
					}
					continue
				}
				if t.IsNoGPUPath(p) {
					continue
				}
				for _, s := range prStages {
					affected[s] = true
				}
				break entries
			}
		}
	}
	for s := range explicit {
		affected[s] = true
	}

	for _, s := range prStages {
		if runnable[s] {
			sel.Runnable = append(sel.Runnable, s)
		}
		if affected[s] {
			sel.Affected = append(sel.Affected, s)
		}
		if !(runnable[s] && affected[s]) {
			sel.Skipped = append(sel.Skipped, s)
		}
	}
	if sel.Skipped == nil {
		sel.Skipped = []string{}
	}
	if sel.Runnable == nil {
		sel.Runnable = []string{}
	}
	if sel.Affected == nil {
		sel.Affected = []string{}
	}
	return sel, nil
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
