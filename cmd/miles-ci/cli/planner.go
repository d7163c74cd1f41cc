package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/usecase"
)

// plannerFlags are --planner and --python, shared by plan, policy, explain
// and file-plan.
type plannerFlags struct {
	planner, python *string
}

func addPlannerFlags(fs *flagSet) plannerFlags {
	return plannerFlags{
		planner: fs.String("planner", "P", "who answers: miles-ci (default; miles-ci's own rules, no Python) or checkout (the checkout's own tests/ci code, run with a local Python >= "+usecase.MinPython+")",
			oneOf(string(usecase.PlannerMilesCI), string(usecase.PlannerCheckout))),
		python: fs.String("python", "PATH", "with --planner checkout: the Python to run the checkout's code with (default python3 on PATH)", fromEnv("MILES_CI_PYTHON")),
	}
}

// checkout reports whether --planner checkout was given.
func (p plannerFlags) checkout() bool { return *p.planner == string(usecase.PlannerCheckout) }

// opener opens the checkout at repo and its Python, for the use cases.
func (p plannerFlags) opener(repo string) func() (*usecase.Checkout, error) {
	return func() (*usecase.Checkout, error) { return usecase.NewCheckout(repo, *p.python) }
}

// open is opener for the commands that answer here; it says once on stderr
// that the answer is the checkout's own.
func (p plannerFlags) open(env Env, repo string) (*usecase.Checkout, error) {
	c, err := p.opener(repo)()
	if err != nil {
		return nil, err
	}
	printMessages(env, []usecase.Message{usecase.CheckoutNotice(c)})
	return c, nil
}

// checkoutTimeout bounds one command's questions to the checkout.
const checkoutTimeout = 10 * time.Minute

// printCheckoutPlans prints `plan --planner checkout`'s answers: the
// checkout's own run_suite.py --list-only as is (text) or read back (--json).
func printCheckoutPlans(env Env, gh *githubFlags, ans usecase.PlanAnswer, all, asJSON bool) int {
	if asJSON {
		out, err := ans.ReadPlans()
		if err != nil {
			return fail(env, fmt.Errorf("%w; drop --json to see its text", err))
		}
		if all {
			return printJSON(env, out)
		}
		return printJSON(env, out[0])
	}
	var md strings.Builder
	for _, p := range ans.Checkout {
		io.WriteString(env.Stdout, p.Text)
		if p.Plan != nil {
			md.WriteString(ghoutput.PlanMarkdown([]*policy.Plan{p.Plan}))
		}
	}
	if err := gh.writeSummary(env, md.String()); err != nil {
		return fail(env, err)
	}
	return 0
}

// policyWithCheckout is `policy --planner checkout`: the checkout's own
// ci_policy, its text as is, its step outputs appended as it wrote them.
func policyWithCheckout(env Env, pf plannerFlags, repo string, req usecase.PolicyRequest, out stepFlags) int {
	c, err := pf.open(env, repo)
	if err != nil {
		return fail(env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkoutTimeout)
	defer cancel()
	ans, err := usecase.PolicyOfCheckout(ctx, c, req)
	if err != nil {
		return fail(env, err)
	}
	var outputs []output
	for _, kv := range ans.Lines {
		outputs = append(outputs, output{kv.Key, kv.Value})
	}
	return out.emit(env, ans, ans.Text, outputs)
}

// filePlanWithCheckout is `file-plan --planner checkout`: the checkout's own
// file_run, in file-plan's usual forms.
func filePlanWithCheckout(env Env, pf plannerFlags, repo, file, tag, body string, out stepFlags) int {
	c, err := pf.open(env, repo)
	if err != nil {
		return fail(env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkoutTimeout)
	defer cancel()
	plan, lines, err := c.FilePlan(ctx, file, tag, body)
	if err != nil {
		return fail(env, err)
	}
	runsOnText := "(empty: a CPU file runs on the hosted ubuntu-latest runner)"
	var outputs []output
	for _, kv := range lines {
		outputs = append(outputs, output{kv.Key, kv.Value})
		if kv.Key == "runs_on" && kv.Value != "" {
			runsOnText = kv.Value
		}
	}
	text := fmt.Sprintf("file: %s\nhw: %s\nsuite: %s\nruns_on: %s\ncontainer_image: %s\ntimeout_seconds: %d\ncommand: %s\n",
		plan.File, plan.HW, plan.Suite, runsOnText, plan.ContainerImage, plan.TimeoutSeconds, strings.Join(plan.Command, " "))
	return out.emit(env, plan, text, outputs)
}

// explainWithCheckout is `explain --planner checkout`: each registration of
// the file in the checkout's own registry, and whether the checkout's own
// --list-only of its suite lists it (and in which shard).
func explainWithCheckout(env Env, pf plannerFlags, repo, file string, base policy.PlanRequest, asJSON bool) int {
	c, err := pf.open(env, repo)
	if err != nil {
		return fail(env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkoutTimeout)
	defer cancel()
	verdicts, cadence, err := usecase.ExplainOfCheckout(ctx, c, repo, file, base)
	if err != nil {
		return fail(env, err)
	}
	if asJSON {
		return printJSON(env, map[string]any{"file": file, "cadence": cadence, "labels": base.Labels, "registrations": verdicts})
	}
	fmt.Fprintf(env.Stdout, "%s under cadence=%s labels=[%s] (the checkout's own tests/ci code):\n", report.Printable(file), cadence, report.Printable(strings.Join(base.Labels, " ")))
	for _, v := range verdicts {
		r := v.Registration
		desc := registrationCall(policy.Registration{Backend: policy.Backend(strings.ToLower(r.Backend)), EstTime: r.EstTime,
			Suite: r.Suite, Labels: r.Labels, Hardware: r.Hardware, Nightly: r.Nightly, Disabled: r.Disabled})
		if r.Implicit {
			desc = "implicit registration (tests/fast/, no call)"
		}
		fmt.Fprintf(env.Stdout, "  %s\n", report.Printable(desc))
		reason := v.Reason
		if v.Shard != nil {
			reason += fmt.Sprintf("; runs in %s (0-based id=%d)", v.Shard, v.Shard.ID)
		}
		// The checkout's code wrote the verdict and the reason: one line each.
		fmt.Fprintf(env.Stdout, "    %s: %s\n", report.Printable(v.Verdict), report.Printable(reason))
	}
	return 0
}
