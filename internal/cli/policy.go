package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/radixark/miles-ci/actions"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
)

func init() {
	register("policy", "resolve cadence, labels, fast-fail and skipped GPU stages from trigger facts", runPolicy)
}

// policyResult is the resolve-ci-policy job's answer.
type policyResult struct {
	Cadence        policy.Cadence `json:"cadence"`
	RawLabels      []string       `json:"raw_labels"`
	BypassFastfail bool           `json:"bypass_fastfail"`
	SkippedStages  []string       `json:"skipped_stages"`
}

// triggerFlags are the trigger facts, each falling back to the workflow's env var.
type triggerFlags struct {
	event, schedule, prLabels, cadenceOverride *string
}

func addTriggerFlags(fs *flagSet) triggerFlags {
	return triggerFlags{
		event:           fs.String("event", "E", "GitHub event: pull_request, schedule or workflow_dispatch (env EVENT_NAME)"),
		schedule:        fs.String("schedule", "CRON", "cron of a scheduled run (env SCHEDULE)"),
		prLabels:        fs.String("pr-labels-json", "JSON", "the PR's label names as a JSON array (env PR_LABELS_JSON)"),
		cadenceOverride: fs.String("cadence-override", "C", "a called workflow's cadence input; wins over the event (env CADENCE_OVERRIDE)"),
	}
}

// flagOrEnv returns the flag's value when given, else the environment variable.
func flagOrEnv(fs *flagSet, env Env, name string, v *string, envName string) string {
	if fs.Given(name) {
		return *v
	}
	return env.Getenv(envName)
}

func (t triggerFlags) trigger(fs *flagSet, env Env) policy.Trigger {
	return policy.Trigger{
		Event:           flagOrEnv(fs, env, "event", t.event, "EVENT_NAME"),
		Schedule:        flagOrEnv(fs, env, "schedule", t.schedule, "SCHEDULE"),
		PRLabelsJSON:    flagOrEnv(fs, env, "pr-labels-json", t.prLabels, "PR_LABELS_JSON"),
		CadenceOverride: flagOrEnv(fs, env, "cadence-override", t.cadenceOverride, "CADENCE_OVERRIDE"),
	}
}

func runPolicy(args []string, env Env) int {
	fs := newFlagSet("policy", "(--event E [--schedule CRON] [--pr-labels-json JSON] [--cadence-override C] | --pr N [--github-repo OWNER/NAME]) [--changed-files FILE] [--repo DIR] [--github-output FILE] [--github-step-summary FILE] [--json]")
	tf := addTriggerFlags(fs)
	changed := fs.String("changed-files", "FILE", "output of git diff --name-status -z -M HEAD^1 HEAD (env CHANGED_FILES_PATH)")
	repo := fs.String("repo", "DIR", "the Miles checkout whose CI tables and test registry decide (default: .)")
	ghOut := fs.String("github-output", "FILE", "append the step outputs to this file (env GITHUB_OUTPUT)")
	gh := addGitHubFlags(fs)
	asJSON := fs.Bool("json", "print JSON instead of text")
	if code := fs.parseOrExit(args, env); code >= 0 {
		return code
	}
	tables, err := loadTables(env, *repo) // "" is the current folder
	if err != nil {
		return fail(env, err)
	}
	trig := tf.trigger(fs, env)
	trig.Tables = tables
	changedPath := flagOrEnv(fs, env, "changed-files", changed, "CHANGED_FILES_PATH")
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
	if trig.Event == policy.EventPullRequest && trig.CadenceOverride == "" {
		reg, err := tables.LoadRegistry(*repo)
		if err != nil {
			return fail(env, err)
		}
		var diff []byte
		prDiffUnusable := ""
		if pr != nil && !fs.Given("changed-files") {
			diff, prDiffUnusable = pr.NameStatus()
		} else if diff, err = readChangedFiles(changedPath); err != nil {
			warn(env, err.Error()) // fail open: a diff that cannot be read skips no stage
		}
		s, err := policy.SelectPRStages(reg, wp, diff)
		if err != nil {
			return fail(env, err)
		}
		if prDiffUnusable != "" {
			s.DiffUnusable = prDiffUnusable // say why, not "no changed-files input"
		}
		sel = &s
		res.SkippedStages = s.Skipped
		if s.DiffUnusable != "" {
			warn(env, "changed files unusable ("+s.DiffUnusable+"); failing open: no GPU stage is skipped")
		}
	}
	if out := flagOrEnv(fs, env, "github-output", ghOut, "GITHUB_OUTPUT"); out != "" {
		if err := appendGitHubOutput(out, policyOutputs(res)); err != nil {
			return fail(env, err)
		}
	}
	report := actions.PolicyReport{Trigger: triggerText(trig, pr), Policy: wp, Selection: sel, Roster: tables.Stages()}
	if err := gh.writeSummary(env, report.Markdown()); err != nil {
		return fail(env, err)
	}
	if *asJSON {
		return printJSON(env, res)
	}
	fmt.Fprintf(env.Stdout, "Resolved CI policy: cadence=%s labels=[%s] bypass_fastfail=%t skipped_stages=%s\n",
		res.Cadence, strings.Join(res.RawLabels, " "), res.BypassFastfail, compactJSON(res.SkippedStages))
	if sel != nil {
		fmt.Fprintf(env.Stdout, "  runnable: %s\n  affected: %s\n", listOrNone(sel.Runnable), listOrNone(sel.Affected))
	}
	return 0
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
		return describe(pr)
	case t.CadenceOverride != "":
		return "a called workflow (cadence " + t.CadenceOverride + ")"
	case t.Event == policy.EventSchedule:
		return "the schedule " + t.Schedule
	}
	return "event " + t.Event
}

// policyOutputs are the four step outputs of rules §3.
func policyOutputs(r policyResult) []string {
	return []string{
		"cadence=" + string(r.Cadence),
		"raw_labels=" + strings.Join(r.RawLabels, " "),
		fmt.Sprintf("bypass_fastfail=%t", r.BypassFastfail),
		"skipped_stages=" + compactJSON(r.SkippedStages),
	}
}

// readChangedFiles reads the diff; a path that is unset, missing or
// unreadable gives nil (the diff is missing, so no stage is skipped).
func readChangedFiles(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read --changed-files %s: %w", path, err)
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
