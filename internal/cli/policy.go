package cli

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/actions"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/policy"
)

func init() {
	register("policy", "resolve cadence, labels, fast-fail and skipped GPU stages from trigger facts", runPolicy)
}

// policyResult is the resolve-ci-policy job's answer.
type policyResult = policy.Outputs

// triggerFlags are the trigger facts, each falling back to the workflow's env var.
type triggerFlags struct {
	event, schedule, prLabels, cadenceOverride *string
}

// triggerFlagNames are the flags addTriggerFlags declares.
var triggerFlagNames = []string{"event", "schedule", "pr-labels-json", "cadence-override"}

func addTriggerFlags(fs *flagSet) triggerFlags {
	return triggerFlags{
		event:           fs.String("event", "E", "GitHub event: pull_request, schedule or workflow_dispatch", fromEnv("EVENT_NAME")),
		schedule:        fs.String("schedule", "CRON", "cron of a scheduled run", fromEnv("SCHEDULE")),
		prLabels:        fs.String("pr-labels-json", "JSON", "the PR's label names as a JSON array", fromEnv("PR_LABELS_JSON")),
		cadenceOverride: fs.String("cadence-override", "C", "a called workflow's cadence input; wins over the event", fromEnv("CADENCE_OVERRIDE")),
	}
}

func (t triggerFlags) trigger() policy.Trigger {
	return policy.Trigger{Event: *t.event, Schedule: *t.schedule, PRLabelsJSON: *t.prLabels, CadenceOverride: *t.cadenceOverride}
}

func runPolicy(args []string, env Env) int {
	fs := newFlagSet("policy", "--event E [--schedule CRON] [--pr-labels-json JSON] [--cadence-override C] [--changed-files FILE]\n"+
		"    [--repo DIR] [--github-output FILE] [--github-step-summary FILE] [--json]\n"+
		"--pr N [--github-repo OWNER/NAME] [--changed-files FILE] [--repo DIR] [--github-output FILE] [--json]", env)
	tf := addTriggerFlags(fs)
	changed := fs.String("changed-files", "FILE", "output of git diff --name-status -z -M HEAD^1 HEAD", fromEnv("CHANGED_FILES_PATH"))
	repo := fs.String("repo", "DIR", "the Miles checkout whose CI tables and test registry decide (default: the current folder)")
	gh := addGitHubFlags(fs)
	out := addStepFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	if *tf.event == "" && *tf.cadenceOverride == "" && !gh.active() {
		return fs.usageError("--event is required (or set EVENT_NAME, or give --pr N)")
	}
	tables, err := loadTables(env, *repo) // "" is the current folder
	if err != nil {
		return fail(env, err)
	}
	trig := tf.trigger()
	trig.Tables = tables
	var pr *github.PR
	if gh.active() {
		// The PR's changed files are needed unless a diff file was given.
		if pr, err = gh.fetch(env, !fs.Given("changed-files")); err != nil {
			return fail(env, err)
		}
		gh.note(env, pr)
		trig = prTrigger(fs, pr, trig)
	}
	wp, err := policy.ResolveTrigger(trig)
	if err != nil {
		return fail(env, err)
	}
	res := policyResult{Cadence: wp.Cadence, RawLabels: wp.RawLabels, BypassFastfail: wp.BypassFastfail, SkippedStages: []string{}}
	var sel *policy.StageSelection
	// Like ci_policy.py, a pull request prunes GPU stages even when a called
	// workflow's cadence override decides the cadence.
	if trig.Event == policy.EventPullRequest {
		reg, err := tables.LoadRegistry(*repo)
		if err != nil {
			return fail(env, err)
		}
		var diff []byte
		unusable := ""
		if pr != nil && !fs.Given("changed-files") {
			diff, unusable = pr.NameStatus()
		} else if diff, err = readChangedFiles(*changed); err != nil {
			unusable = err.Error() // fail open: a diff that cannot be read skips no stage
		}
		s, err := policy.SelectPRStages(reg, wp, diff)
		if err != nil {
			return fail(env, err)
		}
		if unusable != "" {
			s.DiffUnusable = unusable // say why, not "no changed-files input"
		}
		sel = &s
		res.SkippedStages = s.Skipped
		if s.DiffUnusable != "" {
			warn(env, "changed files unusable ("+s.DiffUnusable+"); failing open: no GPU stage is skipped")
		}
	}
	report := actions.PolicyReport{Trigger: triggerText(trig, pr), Policy: wp, Selection: sel, Roster: tables.Stages()}
	if err := gh.writeSummary(env, report.Markdown()); err != nil {
		return fail(env, err)
	}
	text := fmt.Sprintf("Resolved CI policy: cadence=%s labels=[%s] bypass_fastfail=%t skipped_stages=%s\n",
		res.Cadence, strings.Join(res.RawLabels, " "), res.BypassFastfail, compactJSON(res.SkippedStages))
	if sel != nil {
		text += fmt.Sprintf("  runnable: %s\n  affected: %s\n", listOrNone(sel.Runnable), listOrNone(sel.Affected))
	}
	return out.emit(env, res, text, policyOutputs(res))
}

// prTrigger fills the trigger facts the command line did not give from a
// pull request: the event is pull_request and the labels are the PR's.
func prTrigger(fs *flagSet, pr *github.PR, t policy.Trigger) policy.Trigger {
	if !fs.Given("event") {
		t.Event = policy.EventPullRequest
	}
	if !fs.Given("pr-labels-json") {
		t.PRLabelsJSON = pr.LabelsJSON()
	}
	return t
}

// triggerText says what a policy was resolved for, for the step summary.
func triggerText(t policy.Trigger, pr *github.PR) string {
	switch {
	case pr != nil:
		return pr.Describe()
	case t.CadenceOverride != "":
		return "a called workflow (cadence " + t.CadenceOverride + ")"
	case t.Event == policy.EventSchedule:
		return "the schedule " + t.Schedule
	}
	return "event " + t.Event
}

// policyOutputs are the four step outputs of rules §3.
func policyOutputs(r policyResult) []output {
	return []output{
		{"cadence", string(r.Cadence)},
		{"raw_labels", strings.Join(r.RawLabels, " ")},
		{"bypass_fastfail", fmt.Sprintf("%t", r.BypassFastfail)},
		{"skipped_stages", compactJSON(r.SkippedStages)},
	}
}

// readChangedFiles reads the --changed-files diff. An unset path gives nil
// and no error; a path that cannot be read gives nil and an error naming it.
// Either way the diff is missing, so no stage is skipped (rules §4).
func readChangedFiles(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := fsinput.ReadFile(path, fsinput.ChangedFiles)
	if err != nil {
		return nil, fmt.Errorf("--changed-files %w", err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}
