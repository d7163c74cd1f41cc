package cli

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("policy", "resolve cadence, labels, fast-fail and skipped GPU stages from trigger facts", runPolicy)
}

// triggerFlags are the trigger facts, each falling back to the workflow's env var.
type triggerFlags struct {
	event, schedule, prLabels, cadenceOverride *string
}

// triggerFlagNames are the flags addTriggerFlags declares.
var triggerFlagNames = []string{"event", "schedule", "pr-labels-json", "cadence-override"}

// addTriggerFlags declares the trigger flags; eventNote ends --event's help
// (policy needs an event, explain does not).
func addTriggerFlags(fs *flagSet, eventNote string) triggerFlags {
	return triggerFlags{
		event:           fs.String("event", "E", "GitHub event: pull_request, schedule or workflow_dispatch"+eventNote, fromEnv("EVENT_NAME")),
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
	tf := addTriggerFlags(fs, "; required unless --pr or --cadence-override")
	changed := fs.String("changed-files", "FILE", "output of git diff --name-status -z -M HEAD^1 HEAD", fromEnv("CHANGED_FILES_PATH"))
	repo := fs.String("repo", "DIR", "the Miles checkout whose CI tables and test registry decide (default: the current folder)")
	gh := addGitHubFlags(fs)
	out := addStepFlags(fs)
	pf := addPlannerFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	req := usecase.PolicyRequest{Repo: *repo, Trigger: tf.trigger(),
		Given: usecase.Given{Event: fs.Given("event"), PRLabels: fs.Given("pr-labels-json"), Diff: fs.Given("changed-files"), PR: gh.active()}, Frontend: usecase.CLI}
	if err := req.Validate(); err != nil {
		return fs.usageError("%v", err)
	}
	var tables *policy.Tables
	var err error
	if !pf.checkout() {
		var msgs []usecase.Message
		tables, msgs, err = usecase.LoadTables(*repo, "") // "" is the current folder
		printMessages(env, msgs)
		if err != nil {
			return fail(env, err)
		}
	}
	req.Tables = tables
	if gh.active() {
		// The PR's changed files are needed unless a diff file was given.
		if req.PR, err = gh.fetch(env, !req.Given.Diff); err != nil {
			return fail(env, err)
		}
		if err := gh.noteAndCheck(env, *repo, req.PR); err != nil {
			return fail(env, err)
		}
	}
	if *changed != "" {
		req.ReadDiff = func() ([]byte, string, error) {
			diff, unusable := usecase.ReadChangedFiles(*changed, "--changed-files "+*changed)
			return diff, unusable, nil
		}
	}
	if pf.checkout() {
		return policyWithCheckout(env, pf, *repo, req, out)
	}
	ans, err := usecase.Policy(req)
	if err != nil {
		return fail(env, err)
	}
	printMessages(env, ans.Messages)
	res, sel := ans.Outputs, ans.Selection
	report := ghoutput.PolicyReport{Trigger: triggerText(ans.Trigger, req.PR), Policy: ans.Policy, Selection: sel, Roster: tables.Stages()}
	if err := gh.writeSummary(env, report.Markdown()); err != nil {
		return fail(env, err)
	}
	text := fmt.Sprintf("Resolved CI policy: cadence=%s labels=[%s] bypass_fastfail=%t skipped_stages=%s\n",
		res.Cadence, strings.Join(res.RawLabels, " "), res.BypassFastfail, compactJSON(res.SkippedStages))
	if sel != nil {
		runnable := listOrNone(sel.Runnable)
		if !sel.RunnableKnown() {
			runnable = "(not worked out: without a usable diff no GPU stage is skipped)"
		}
		text += fmt.Sprintf("  runnable: %s\n  affected: %s\n", runnable, listOrNone(sel.Affected))
	}
	return out.emit(env, ans.JSON(), text, policyOutputs(res))
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
func policyOutputs(r policy.Outputs) []output {
	var out []output
	for _, o := range r.StepOutputs() {
		out = append(out, output{o.Key, o.Value})
	}
	return out
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}
