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
	// DiffUnusable says why the diff was ignored (no stage is skipped, or
	// with SkipsUnrunnable only the unrunnable ones), or "".
	DiffUnusable string `json:"diff_unusable,omitempty"`
	// SkipsUnrunnable: the checkout's form treats every stage as affected
	// when the diff is unusable, so the unrunnable ones are still skipped
	// (rules §11.5).
	SkipsUnrunnable bool `json:"skips_unrunnable,omitempty"`
}

// RunnableKnown says whether Runnable was worked out: not for an unusable
// diff in the form that then skips no stage, which reads no registration
// (UnusableDiffSelection), so Runnable is empty without meaning "none".
func (s StageSelection) RunnableKnown() bool { return s.DiffUnusable == "" || s.SkipsUnrunnable }

// DiffNote is the one line a front end prints when the diff was unusable,
// or "": it says what happened to the stages in the checkout's form.
func (s StageSelection) DiffNote() string {
	switch {
	case s.DiffUnusable == "":
		return ""
	case s.SkipsUnrunnable:
		return "changed files unusable (" + s.DiffUnusable + "); all selected GPU stages are treated as affected"
	}
	return "changed files unusable (" + s.DiffUnusable + "); failing open: no GPU stage is skipped"
}

// DiffUnusable says why a changed-files diff cannot be used (rules §4), or
// "" when it can: nil is no diff at all, else what ParseNameStatus finds.
func DiffUnusable(diff []byte) string {
	if diff == nil {
		return "no changed-files input"
	}
	if _, err := ParseNameStatus(diff); err != nil {
		return err.Error()
	}
	return ""
}

// SelectionReadsRegistry reports whether the PR stage selection of a diff
// that is unusable for the reason given ("" = usable) reads the test
// registry. In the 31f1ca9 form ci_policy.py skips no stage on an unusable
// diff without collecting a registration, so a broken test file cannot fail
// that policy; miles-ci must not fail on what the checkout does not read.
func (t *Tables) SelectionReadsRegistry(unusable string) bool {
	return unusable == "" || t.or().Forms.UnusableDiffSkipsUnrunnable
}

// UnusableDiffSelection is the selection of the 31f1ca9 form for an
// unusable diff, made without the registry: no stage is skipped. Runnable
// is left empty, as the registry was not read.
func UnusableDiffSelection(t *Tables, unusable string) StageSelection {
	return StageSelection{Runnable: []string{}, Affected: t.PRGPUStages(), Skipped: []string{}, DiffUnusable: unusable}
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
	// stagesOf are the PR GPU stages a registration executes in: its suite,
	// or under the GPU-generation rules its dispatch targets (rules §11.4).
	stagesOf := func(r Registration) []string {
		var out []string
		for _, s := range prStages {
			if t.RunsInStage(r, s, rp) {
				out = append(out, s)
			}
		}
		return out
	}
	mark := func(m map[string]bool, stages []string) {
		for _, s := range stages {
			m[s] = true
		}
	}

	runnable := map[string]bool{}
	for _, r := range reg.Registrations {
		if r.Disabled == nil && rp.Selects(r) {
			mark(runnable, stagesOf(r))
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
			if r.Disabled == nil && (!r.Nightly || rp.AdmitNightly) && sharesLabel(r.Labels, requested) {
				mark(explicit, stagesOf(r))
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
		// An unusable diff fails open (rules §4): no stage is skipped, or in
		// the later form every selected stage counts as affected (§11.5).
		sel.Runnable, sel.Affected, sel.Skipped = sortedKeys(runnable), prStages, []string{}
		if sel.Runnable == nil {
			sel.Runnable = []string{}
		}
		if t.or().Forms.UnusableDiffSkipsUnrunnable {
			sel.SkipsUnrunnable = true
			for _, s := range prStages {
				if !runnable[s] {
					sel.Skipped = append(sel.Skipped, s)
				}
			}
		}
		return sel, nil
	}
	{
		stagesOfFile := map[string][]string{}
		for _, r := range reg.Registrations {
			stagesOfFile[r.File] = append(stagesOfFile[r.File], stagesOf(r)...)
		}
	entries:
		for _, e := range entries {
			for _, p := range e.Paths {
				if stages, ok := stagesOfFile[p]; ok {
					for _, s := range stages {
						affected[s] = true
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
