package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/policy/pysource"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("explain", "why one test file runs, is skipped, or is not selected, and in which shard", runExplain)
	register("stages", "the stage roster: backend, runners, shards, parallelism, needs, image", runStages)
}

func runExplain(args []string, env Env) int {
	fs := newFlagSet("explain", "--file PATH [--repo DIR] [--cadence C | --nightly] [--labels L ...] [--match-all-labels] [--json]\n"+
		"--file PATH [--repo DIR] --event E [--schedule CRON] [--pr-labels-json JSON] [--cadence-override C]\n"+
		"    [--match-all-labels] [--json]\n"+
		"--file PATH [--repo DIR] --pr N [--github-repo OWNER/NAME] [--github-step-summary FILE] [--json]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout (default: the current folder)")
	file := fs.String("file", "PATH", "repo-relative test file, e.g. tests/e2e/megatron/test_x.py", required())
	sf := addSuiteFlags(fs)
	tf := addTriggerFlags(fs, "")
	gh := addGitHubFlags(fs)
	asJSON := fs.Bool("json", "print JSON instead of text")
	pf := addPlannerFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	// Trigger facts (or a PR) decide cadence and labels as the workflow
	// would, so a flag that also decides them is a contradiction, not a
	// fallback.
	var trigger, direct []string
	for _, n := range append(triggerFlagNames, "pr") {
		if fs.Given(n) {
			trigger = append(trigger, "--"+n)
		}
	}
	for _, n := range []string{"cadence", "nightly", "labels"} {
		if fs.Given(n) {
			direct = append(direct, "--"+n)
		}
	}
	if len(trigger) > 0 && len(direct) > 0 {
		return fs.usageError("%s conflicts with %s: the trigger decides the cadence and labels; give one or the other", strings.Join(direct, " and "), strings.Join(trigger, " and "))
	}
	if len(trigger) > 0 && !gh.active() && !fs.Given("event") && !fs.Given("cadence-override") {
		return fs.usageError("%s needs --event (or --cadence-override, or --pr): the event decides how %s is read", strings.Join(trigger, " and "), strings.Join(trigger, " and "))
	}
	cadence, err := sf.resolveCadence(fs)
	if err != nil {
		return fs.usageError("%v", err)
	}
	if pf.checkout() {
		if len(trigger) > 0 {
			return fs.usageError("--planner checkout explains under --cadence and --labels; the trigger flags (%s) need miles-ci's planner", strings.Join(trigger, " and "))
		}
		return explainWithCheckout(env, pf, *repo, *file, policy.PlanRequest{Cadence: cadence, Labels: *sf.labels, MatchAllLabels: *sf.matchAllLabels}, *asJSON)
	}
	in := usecase.ExplainInputs{Repo: *repo, File: *file, Cadence: cadence, Labels: *sf.labels, MatchAll: *sf.matchAllLabels, // "" is the current folder
		Given: usecase.Given{Event: fs.Given("event"), PRLabels: fs.Given("pr-labels-json")}}
	if len(trigger) > 0 {
		trig := tf.trigger()
		in.Trigger = &trig
		if gh.active() {
			pr, err := gh.fetch(env, false)
			if err != nil {
				return fail(env, err)
			}
			if err := gh.noteAndCheck(env, *repo, pr); err != nil {
				return fail(env, err)
			}
			in.PR = pr
		}
	}
	ans, err := usecase.Explain(in)
	printMessages(env, ans.Messages)
	if err != nil {
		return fail(env, err)
	}
	fe, rp := ans.File, ans.Policy
	if err := gh.writeSummary(env, ghoutput.ExplainMarkdown(fe)); err != nil {
		return fail(env, err)
	}
	if *asJSON {
		return printJSON(env, fe)
	}
	fmt.Fprintf(env.Stdout, "%s under cadence=%s include_labels=%s:\n", report.Printable(fe.File), rp.Cadence, pysource.ReprList(rp.IncludeLabels))
	for _, e := range fe.Registrations {
		r := e.Registration
		desc := registrationCall(r)
		where := "line " + fmt.Sprint(r.Line)
		if r.Implicit {
			desc, where = "implicit registration (tests/fast/, no call)", "stage-a-cpu, est_time=1.0"
		}
		fmt.Fprintf(env.Stdout, "  %s [%s]\n", report.Printable(desc), where)
		switch {
		case e.Stage != nil && e.PoolRunsOn != nil:
			fmt.Fprintf(env.Stdout, "    stage: %s (%s, B200 pool job on %s)\n", report.Printable(e.Stage.Name), e.Stage.Backend, report.Printable(strings.Join(e.PoolRunsOn, "+")))
		case e.Stage != nil && e.Stage.External:
			// As stages shows it: no job of the checkout's workflows runs it.
			fmt.Fprintf(env.Stdout, "    stage: %s (%s, external nightly only: no job of the checkout's workflows runs it)\n", report.Printable(e.Stage.Name), e.Stage.Backend)
		case e.Stage != nil:
			fmt.Fprintf(env.Stdout, "    stage: %s (%s, runs on %s)\n", report.Printable(e.Stage.Name), e.Stage.Backend, report.Printable(strings.Join(e.Stage.RunsOn, "+")))
		}
		// The reason quotes the checkout (a disabled= text): one line.
		fmt.Fprintf(env.Stdout, "    %s: %s\n", e.Verdict, report.Printable(e.Reason))
	}
	return 0
}

func runStages(args []string, env Env) int {
	fs := newFlagSet("stages", "[--repo DIR] [--json]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout whose workflows and CI_SUITES make the roster (default: the current folder, as every command; outside a Miles checkout, the built-in roster of rules §1)")
	asJSON := fs.Bool("json", "print JSON instead of text")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	// The current folder, as every command reads it; only a folder that is
	// not a checkout at all falls back to the built-in roster (a notice
	// says so), so stages also answers from anywhere.
	roster, msgs, err := usecase.Roster(usecase.RosterRequest{Repo: *repo, Given: usecase.Given{Repo: true}, OrBuiltIn: !fs.Given("repo")})
	printMessages(env, msgs)
	if err != nil {
		return fail(env, err)
	}
	if *asJSON {
		return printJSON(env, roster)
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	const row = "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n"
	fmt.Fprintf(w, row, "STAGE", "HW", "RUNS ON", "SHARDS", "PARALLEL(WK)", "NEEDS", "IMAGE", "FROM")
	for _, s := range roster {
		runsOn, shards, par, needs, image := strings.Join(s.RunsOn, ","), fmt.Sprint(s.Shards), fmt.Sprintf("%d (%d)", s.MaxParallel, s.MaxParallelWeekly), strings.Join(s.Needs, ","), s.Image
		if s.ByCadence != nil {
			shards = cadenceCounts(s.ByCadence.Shards)
			par = cadenceCounts(s.ByCadence.MaxParallel)
		}
		if s.External {
			runsOn, shards, par, needs = "external nightly only", "-", "-", "-"
		}
		if image == "" {
			image = "-"
		}
		if runsOn == "" {
			runsOn = "-"
		}
		from := s.Source
		if s.Job != "" && s.Job != s.Name {
			from += " (job " + s.Job + ")"
		}
		// The checkout's workflows name the stage, its runners, needs and
		// image: one printable cell each (a tab would move the columns).
		p := report.Printable
		fmt.Fprintf(w, row, p(s.Name), s.Backend, p(runsOn), shards, par, p(needs), p(image), p(from))
	}
	if err := w.Flush(); err != nil {
		return fail(env, err)
	}
	return 0
}

// cadenceCounts shows a count that depends on the cadence, as
// regular/nightly/weekly/release, e.g. 1/2/2/2.
func cadenceCounts(m map[policy.Cadence]int) string {
	return fmt.Sprintf("%d/%d/%d/%d", m[policy.Regular], m[policy.Nightly], m[policy.Weekly], m[policy.Release])
}

// registrationCall is the register_*_ci call that makes r, as the test file
// would write it (the arguments left at their defaults omitted).
func registrationCall(r policy.Registration) string {
	desc := fmt.Sprintf("register_%s_ci(est_time=%s, suite=%q", r.Backend, pysource.FloatRepr(r.EstTime), r.Suite)
	if len(r.Labels) > 0 {
		desc += ", labels=" + pysource.ReprList(r.Labels)
	}
	if len(r.Hardware) > 0 {
		desc += ", hardware=" + pysource.ReprList(r.Hardware)
	}
	if r.NumGPUs > 0 {
		desc += fmt.Sprintf(", num_gpus=%d", r.NumGPUs)
	}
	if r.Nightly {
		desc += ", nightly=True"
	}
	if r.Disabled != nil {
		desc += ", disabled=" + pysource.Repr(*r.Disabled)
	}
	return desc + ")"
}
