package policy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Drift is one disagreement between the CI tables, the workflows and the
// test registry that makes Miles CI skip or mis-run tests without an error.
type Drift struct {
	// Kind is one of the Drift* kinds.
	Kind string `json:"kind"`
	// File is the repo-relative file that holds the fault ("built-in" for a
	// built-in table); Line is its 1-based line, or 0.
	File string `json:"file"`
	Line int    `json:"line"`
	// Message says what is wrong and how to mend it.
	Message string `json:"message"`
}

// String is "FILE:LINE: KIND: MESSAGE".
func (d Drift) String() string {
	where := d.File
	if d.Line > 0 {
		where = fmt.Sprintf("%s:%d", d.File, d.Line)
	}
	return fmt.Sprintf("%s: %s: %s", where, d.Kind, d.Message)
}

// The kinds of drift lint reports.
const (
	// DriftSuiteNoJob: a CI_SUITES suite no stage job runs.
	DriftSuiteNoJob = "suite-without-job"
	// DriftJob: a stage job whose run_suite.py flags disagree with its name,
	// its matrix or CI_SUITES.
	DriftJob = "job-mismatch"
	// DriftUngated: a PR GPU stage whose job has no skipped_stages gate.
	DriftUngated = "ungated-pr-stage"
	// DriftSuiteNoTests: a CI_SUITES suite no test registers.
	DriftSuiteNoTests = "suite-without-tests"
	// DriftTestNoJob: a registration to a suite no job runs.
	DriftTestNoJob = "test-without-job"
	// DriftUnusedLabel: a KNOWN_LABELS label no test uses.
	DriftUnusedLabel = "unused-label"
	// DriftCron: a workflow schedule cron with no SCHEDULE_POLICIES entry.
	DriftCron = "cron-without-policy"
	// DriftUnmodeledStep is a step of a run workflow miles-ci does not model (rules §11.6).
	DriftUnmodeledStep = "unmodeled-step"
	// DriftStepEnv is a run-workflow step that sets a variable through
	// $GITHUB_ENV that is not on the allow-list (StepEnvAllowed).
	DriftStepEnv = "env-not-allowed"
)

// Lint reports every drift between the registry's tables, the workflows its
// roster came from and its registrations, sorted by file, line and kind.
func Lint(reg *Registry) []Drift {
	t := reg.Tables.or()
	out := slices.Concat(t.workflow.drift, t.RunSteps.Unmodeled)
	add := func(kind, file string, line int, format string, args ...any) {
		out = append(out, Drift{Kind: kind, File: file, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	runs := func(b Backend, suite string) bool {
		return slices.ContainsFunc(t.Roster, func(s Stage) bool { return !s.External && s.Backend == b && s.Name == suite })
	}
	external := func(b Backend, suite string) bool {
		return slices.ContainsFunc(t.Roster, func(s Stage) bool { return s.External && s.Backend == b && s.Name == suite })
	}
	workflows := "the stage jobs of " + PRTestWorkflow + " and " + PRTestROCmWorkflow
	if len(t.workflow.files) == 0 {
		workflows = "the built-in roster"
	}

	registered := map[Backend]map[string]bool{}
	for _, b := range Backends() {
		registered[b] = map[string]bool{}
	}
	used := map[string]bool{}
	for _, r := range reg.Registrations {
		if registered[r.Backend] != nil {
			registered[r.Backend][r.Suite] = true
		}
		for _, l := range r.Labels {
			used[l] = true
		}
	}

	for _, b := range Backends() {
		for _, s := range t.Suites.Of(b) {
			file, line := t.locate(TableSuites, s)
			if !runs(b, s) && !external(b, s) {
				add(DriftSuiteNoJob, file, line, "suite %s (%s) is in CI_SUITES but none of %s runs it, so its tests never run; add a stage job %s, or drop the suite", s, b, workflows, s)
			}
			if !registered[b][s] {
				add(DriftSuiteNoTests, file, line, "suite %s (%s) is in CI_SUITES but no test registers it; register a test with suite=%q or drop the suite", s, b, s)
			}
		}
	}
	for _, st := range t.Roster {
		if st.External || st.Backend == "" {
			if st.Backend == "" {
				file, line := splitSource(st.Source)
				add(DriftJob, file, line, "job %s gates stage %s, which no backend's CI_SUITES lists; add it to CI_SUITES or fix the name", st.Job, st.Name)
			}
			continue
		}
		if !slices.Contains(t.Suites.Of(st.Backend), st.Name) {
			file, line := splitSource(st.Source)
			add(DriftJob, file, line, "stage %s runs --hw %s --suite %s, which CI_SUITES does not list for %s: run_suite.py fails with \"Unknown suite\"; add the suite to CI_SUITES or fix the flags", jobName(st), st.Backend, st.Name, st.Backend)
		}
	}
	for _, p := range t.PRGPU {
		i := slices.IndexFunc(t.Roster, func(s Stage) bool { return !s.External && s.Name == p })
		if i < 0 {
			file, line := t.locate(TablePRGPUStages, p)
			add(DriftUngated, file, line, "PR GPU stage %s has no stage job in %s; drop it from PR_GPU_STAGES or add the job", p, workflows)
			continue
		}
		if st := t.Roster[i]; !st.SkipGated {
			file, line := splitSource(st.Source)
			add(DriftUngated, file, line, "stage %s is a PR GPU stage but its job has no skipped_stages gate, so it runs even when the policy skips it; add !contains(fromJSON(needs.resolve-ci-policy.outputs.skipped_stages || '[]'), '%s') to its if:", jobName(st), p)
		}
	}
	for _, r := range reg.Registrations {
		if runs(r.Backend, r.Suite) || external(r.Backend, r.Suite) {
			continue
		}
		why := "no stage job runs it"
		if !slices.Contains(t.Suites.Of(r.Backend), r.Suite) {
			known := strings.Join(t.Suites.Of(r.Backend), ", ")
			if known == "" {
				known = "it has none"
			}
			why = fmt.Sprintf("it is not a %s suite of CI_SUITES (%s)", r.Backend, known)
		}
		add(DriftTestNoJob, r.File, r.Line, "register_%s_ci(suite=%q) never runs: %s; register it for a suite a stage job runs", r.Backend, r.Suite, why)
	}
	for _, l := range t.Labels {
		if !used[l.Name] {
			file, line := t.locate(TableLabels, l.Name)
			add(DriftUnusedLabel, file, line, "label %s is in KNOWN_LABELS but no test uses it, so run-ci-%s selects nothing; label a test with it or drop it", l.Name, l.Name)
		}
	}
	for _, c := range t.workflow.crons {
		if _, ok := t.CronPolicy(c.Value); !ok {
			add(DriftCron, c.File, c.Line, "schedule cron %q has no entry in SCHEDULE_POLICIES (%s), so every scheduled run fails closed; add it there with its cadence", c.Value, t.Origin(TableCrons))
		}
	}
	slices.SortStableFunc(out, func(a, b Drift) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(out)
}

// locate is the file and line of one element of a table ("built-in", 0 for
// a built-in table).
func (t *Tables) locate(table, elem string) (string, int) {
	o := t.Origin(table)
	if o.Builtin() {
		return "built-in", 0
	}
	if line := t.lines[table][elem]; line > 0 {
		return o.File, line
	}
	return o.File, o.Line
}

// splitSource turns a Stage.Source "FILE:LINE" into its parts.
func splitSource(src string) (string, int) {
	i := strings.LastIndexByte(src, ':')
	if i < 0 {
		return src, 0
	}
	var line int
	if _, err := fmt.Sscanf(src[i+1:], "%d", &line); err != nil {
		return src, 0
	}
	return src[:i], line
}

func jobName(st Stage) string {
	if st.Job != "" && st.Job != st.Name {
		return st.Job + " (" + st.Name + ")"
	}
	return st.Name
}
