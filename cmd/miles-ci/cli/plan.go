package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("plan", "what one suite shard runs, as run_suite.py --list-only shows it", runPlan)
}

// Shard flag ranges: GitHub Actions runs at most 256 jobs from one matrix,
// so no stage can have more shards than that.
const maxShards = policy.MaxShards

// suiteFlags are the run_suite.py flags shared by plan and explain.
type suiteFlags struct {
	cadence         *string
	nightly         *bool
	labels          *[]string
	matchAllLabels  *bool
	continueOnError *bool
}

func addSuiteFlags(fs *flagSet) suiteFlags {
	names := make([]string, 0, len(policy.Cadences))
	for _, c := range []policy.Cadence{policy.Regular, policy.Nightly, policy.Weekly, policy.Release} {
		names = append(names, string(c))
	}
	return suiteFlags{
		cadence:         fs.String("cadence", "C", "CI cadence (default regular)", oneOf(names...)),
		nightly:         fs.Bool("nightly", "the same as --cadence nightly"),
		labels:          fs.List("labels", "LABEL", "raw PR labels, e.g. run-ci-megatron run-ci-fsdp (zero or more)"),
		matchAllLabels:  fs.Bool("match-all-labels", "include every known label, as a manual dispatch of a GPU stage does"),
		continueOnError: fs.Bool("continue-on-error", "keep running after a failed test"),
	}
}

// resolveCadence returns the cadence the flags name, or a usage error when
// --cadence and --nightly are both given (argparse's mutually exclusive group).
func (f suiteFlags) resolveCadence(fs *flagSet) (policy.Cadence, error) {
	if fs.Given("cadence") && fs.Given("nightly") {
		return "", errors.New("--nightly is not allowed with --cadence; give one")
	}
	if *f.nightly {
		return policy.Nightly, nil
	}
	if !fs.Given("cadence") {
		return policy.Regular, nil
	}
	return policy.ParseCadence(*f.cadence)
}

func runPlan(args []string, env Env) int {
	fs := newFlagSet("plan", "--hw cpu|cuda|rocm --suite S [--repo DIR] [--cadence C | --nightly] [--labels L ...]\n"+
		"    [--match-all-labels] [--auto-partition-id I --auto-partition-size N] [--continue-on-error]\n"+
		"    [--pr N [--github-repo OWNER/NAME]] [--github-step-summary FILE] [--json]\n"+
		"--all [--repo DIR] [--cadence C | --nightly] [--labels L ...] [--match-all-labels]\n"+
		"    [--pr N [--github-repo OWNER/NAME]] [--github-step-summary FILE] [--json]\n"+
		"--pool [--suites S ...] [--repo DIR] [--cadence C | --nightly] [--labels L ...] [--match-all-labels]\n"+
		"    [--github-output FILE] [--matrix | --json]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout to plan (default: the current folder)")
	hw := fs.String("hw", "HW", "hardware backend (required unless --all)", oneOf(policy.BackendNames()...))
	suite := fs.String("suite", "S", "suite (= stage) name, e.g. stage-a-cpu (required unless --all)")
	all := fs.Bool("all", "plan every suite and every shard of the roster that applies to the checkout")
	sf := addSuiteFlags(fs)
	pid := fs.Int("auto-partition-id", "I", "0-based shard index", 0, maxShards-1)
	psize := fs.Int("auto-partition-size", "N", "number of shards", 1, maxShards)
	fs.Bool("list-only", "accepted and ignored: plan only ever lists (the workflows pass it)")
	fs.Bool("enable-retry", "accepted and ignored: retries change how a shard runs, not what it runs")
	fs.Int("max-attempts", "N", "accepted and ignored, like --enable-retry", 1, 10)
	gh := addGitHubFlags(fs)
	asJSON := fs.Bool("json", "print JSON instead of text")
	hasTestsOut := fs.String("github-output", "FILE", "append has_tests=true|false (the shard has an enabled test) to FILE, as run_suite.py --list-only --github-output does for the hosted plan job (rules §11.5)")
	pf := addPlannerFlags(fs)
	pool := fs.Bool("pool", "plan the B200 pool as tests/ci/b200_plan.py does (rules §11.8): one job per file at its GPU count, in batches")
	poolSuites := fs.List("suites", "S", "with --pool: the pool suites to plan (default: every pool suite of the checkout)")
	matrix := fs.Bool("matrix", "with --pool: print the matrix as b200_plan.py prints it")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	if *pool {
		return runPoolPlan(fs, env, poolPlanFlags{repo: *repo, sf: sf, suites: *poolSuites, matrix: *matrix, asJSON: *asJSON, githubOutput: hasTestsOut})
	}
	if fs.Given("suites") || fs.Given("matrix") {
		return fs.usageError("--suites and --matrix go with --pool")
	}
	cadence, err := sf.resolveCadence(fs)
	if err != nil {
		return fs.usageError("%v", err)
	}
	in := usecase.PlanRequest{Repo: *repo, All: *all, HasTestsOutput: fs.Given("github-output"), // "" is the current folder
		PartitionID: pid.ptr(), PartitionSize: psize.ptr(),
		Request: policy.PlanRequest{HW: policy.Backend(*hw), Suite: *suite, Cadence: cadence, Labels: *sf.labels, MatchAllLabels: *sf.matchAllLabels, ContinueOnError: *sf.continueOnError},
		Given:   usecase.Given{Cadence: fs.Given("cadence") || fs.Given("nightly"), Labels: fs.Given("labels")}}
	if err := in.Validate(); err != nil {
		return fs.usageError("%v", err)
	}
	if pf.checkout() {
		in.Planner, in.Checkout = usecase.PlannerCheckout, pf.opener(*repo)
	}
	if gh.active() {
		pr, err := gh.fetch(env, *all)
		if err != nil {
			return fail(env, err)
		}
		if err := gh.noteAndCheck(env, *repo, pr); err != nil {
			return fail(env, err)
		}
		in.PR = pr
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkoutTimeout)
	defer cancel()
	ans, err := usecase.Plan(ctx, in)
	printMessages(env, ans.Messages)
	if err != nil {
		return fail(env, err)
	}
	if pf.checkout() {
		return printCheckoutPlans(env, gh, ans, *all, *asJSON)
	}
	plans := ans.Plans
	if fs.Given("github-output") {
		out := stepFlags{githubOutput: hasTestsOut}
		if err := out.writeOutputs([]output{{"has_tests", fmt.Sprintf("%t", ans.HasTests)}}); err != nil {
			return fail(env, err)
		}
	}
	var md strings.Builder
	if ans.Selection != nil {
		report := ghoutput.PolicyReport{Trigger: in.PR.Describe(), Policy: *ans.PRPolicy, Roster: ans.Roster, Selection: ans.Selection}
		md.WriteString(report.Markdown())
	}
	md.WriteString(ghoutput.PlanMarkdown(plans))
	if err := gh.writeSummary(env, md.String()); err != nil {
		return fail(env, err)
	}
	if *asJSON {
		if *all {
			return printJSON(env, plans)
		}
		return printJSON(env, plans[0])
	}
	for _, p := range plans {
		io.WriteString(env.Stdout, ghoutput.Plain(p.Text()))
	}
	if ans.Pool != nil {
		// stdout stays byte for byte run_suite.py --list-only (scripts diff
		// it); the suite's pool jobs go beside it, as plan --pool prints them.
		io.WriteString(env.Stderr, ans.Pool.Text())
	}
	return 0
}

// poolPlanFlags are the flags plan --pool reads.
type poolPlanFlags struct {
	repo         string
	sf           suiteFlags
	suites       []string
	matrix       bool
	asJSON       bool
	githubOutput *string
}

// poolJSON is plan --pool --json: the plan and the matrix text.
type poolJSON struct {
	policy.PoolPlan
	Matrix   string `json:"matrix"`
	HasTests bool   `json:"has_tests"`
}

// runPoolPlan is plan --pool: b200_plan.py's plan of the B200 pool.
func runPoolPlan(fs *flagSet, env Env, f poolPlanFlags) int {
	for _, name := range []string{"hw", "suite", "all", "auto-partition-id", "auto-partition-size", "pr", "planner"} {
		if fs.Given(name) {
			return fs.usageError("--pool plans the pool's suites as one; drop --%s", name)
		}
	}
	if f.matrix && f.asJSON {
		return fs.usageError("--matrix and --json: give one")
	}
	cadence, err := f.sf.resolveCadence(fs)
	if err != nil {
		return fs.usageError("%v", err)
	}
	req := policy.PoolRequest{Cadence: cadence, Labels: *f.sf.labels, MatchAllLabels: *f.sf.matchAllLabels}
	if fs.Given("suites") {
		req.Suites = f.suites
		if req.Suites == nil {
			req.Suites = []string{}
		}
	}
	ans, err := usecase.PlanPool(usecase.PoolInputs{Repo: f.repo, Request: req})
	printMessages(env, ans.Messages)
	if err != nil {
		return fail(env, err)
	}
	p := ans.Plan
	if fs.Given("github-output") {
		out := stepFlags{githubOutput: f.githubOutput}
		if err := out.writeOutputs([]output{{"matrix", p.Matrix()}, {"has_tests", fmt.Sprintf("%t", p.HasTests())}}); err != nil {
			return fail(env, err)
		}
	}
	switch {
	case f.asJSON:
		return printJSON(env, poolJSON{PoolPlan: p, Matrix: p.Matrix(), HasTests: p.HasTests()})
	case f.matrix:
		io.WriteString(env.Stdout, p.Matrix()+"\n")
	default:
		io.WriteString(env.Stdout, p.Text())
	}
	return 0
}
