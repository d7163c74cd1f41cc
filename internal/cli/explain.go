package cli

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/actions"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/policy/pysource"
)

func init() {
	register("explain", "why one test file runs, is skipped, or is not selected, and in which shard", runExplain)
	register("stages", "the stage roster: backend, runners, shards, parallelism, needs, image", runStages)
}

func runExplain(args []string, env Env) int {
	fs := newFlagSet("explain", "--repo DIR --file PATH [--cadence C | --nightly | --event E ... | --pr N [--github-repo OWNER/NAME]] [--labels L ...] [--match-all-labels] [--github-step-summary FILE] [--json]")
	repo := fs.String("repo", "DIR", "the Miles checkout (default: .)")
	file := fs.String("file", "PATH", "repo-relative test file, e.g. tests/e2e/megatron/test_x.py")
	sf := addSuiteFlags(fs)
	tf := addTriggerFlags(fs)
	gh := addGitHubFlags(fs)
	asJSON := fs.Bool("json", "print JSON instead of text")
	if code := fs.parseOrExit(args, env); code >= 0 {
		return code
	}
	if *file == "" {
		fmt.Fprintln(env.Stderr, "miles-ci explain: --file is required")
		return 2
	}
	cadence, err := sf.resolveCadence(fs)
	if err != nil {
		return fail(env, err)
	}
	labels := *sf.labels
	// Trigger facts, when given, decide cadence and labels as the workflow would.
	if gh.active() {
		pr, err := gh.fetch(env, false)
		if err != nil {
			return fail(env, err)
		}
		gh.note(env, pr)
		wp, err := policy.ResolveTrigger(prTrigger(fs, pr, tf.trigger(fs, env)))
		if err != nil {
			return fail(env, err)
		}
		cadence, labels = wp.Cadence, wp.RawLabels
	} else if fs.Given("event") || fs.Given("cadence-override") {
		wp, err := policy.ResolveTrigger(tf.trigger(fs, env))
		if err != nil {
			return fail(env, err)
		}
		cadence, labels = wp.Cadence, wp.RawLabels
	}
	rp, err := policy.ResolveRunPolicy(cadence, labels, *sf.matchAllLabels)
	if err != nil {
		return fail(env, err)
	}
	reg, err := policy.LoadRegistry(*repo) // "" is the current folder
	if err != nil {
		return fail(env, err)
	}
	fe, err := policy.Explain(reg, *file, rp)
	if err != nil {
		return fail(env, err)
	}
	if err := gh.writeSummary(env, actions.ExplainMarkdown(fe)); err != nil {
		return fail(env, err)
	}
	if *asJSON {
		return printJSON(env, fe)
	}
	fmt.Fprintf(env.Stdout, "%s under cadence=%s include_labels=%s:\n", fe.File, rp.Cadence, pysource.ReprList(rp.IncludeLabels))
	for _, e := range fe.Registrations {
		r := e.Registration
		desc := fmt.Sprintf("register_%s_ci(est_time=%s, suite=%q", r.Backend, pysource.FloatRepr(r.EstTime), r.Suite)
		if len(r.Labels) > 0 {
			desc += ", labels=" + pysource.ReprList(r.Labels)
		}
		if r.Nightly {
			desc += ", nightly=True"
		}
		if r.Disabled != nil {
			desc += ", disabled=" + pysource.Repr(*r.Disabled)
		}
		desc += ")"
		where := "line " + fmt.Sprint(r.Line)
		if r.Implicit {
			desc, where = "implicit registration (tests/fast/, no call)", "stage-a-cpu, est_time=1.0"
		}
		fmt.Fprintf(env.Stdout, "  %s [%s]\n", desc, where)
		if e.Stage != nil {
			fmt.Fprintf(env.Stdout, "    stage: %s (%s, runs on %s)\n", e.Stage.Name, e.Stage.Backend, strings.Join(e.Stage.RunsOn, "+"))
		}
		fmt.Fprintf(env.Stdout, "    %s: %s\n", e.Verdict, e.Reason)
	}
	return 0
}

func runStages(args []string, env Env) int {
	fs := newFlagSet("stages", "[--json]")
	asJSON := fs.Bool("json", "print JSON instead of text")
	if code := fs.parseOrExit(args, env); code >= 0 {
		return code
	}
	roster := policy.Roster()
	if *asJSON {
		return printJSON(env, roster)
	}
	fmt.Fprintf(env.Stdout, "%-28s %-5s %-32s %-6s %-14s %-28s %s\n", "STAGE", "HW", "RUNS ON", "SHARDS", "PARALLEL(WK)", "NEEDS", "IMAGE")
	for _, s := range roster {
		runsOn, shards, par, needs, image := strings.Join(s.RunsOn, ","), fmt.Sprint(s.Shards), fmt.Sprintf("%d (%d)", s.MaxParallel, s.MaxParallelWeekly), strings.Join(s.Needs, ","), s.Image
		if s.External {
			runsOn, shards, par, needs = "external nightly only", "-", "-", "-"
		}
		if image == "" {
			image = "-"
		}
		fmt.Fprintf(env.Stdout, "%-28s %-5s %-32s %-6s %-14s %-28s %s\n", s.Name, s.Backend, runsOn, shards, par, needs, image)
	}
	return 0
}
