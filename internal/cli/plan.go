package cli

import (
	"errors"
	"io"

	"github.com/radixark/miles-ci/policy"
)

func init() {
	register("plan", "what one suite shard runs, as run_suite.py --list-only shows it", runPlan)
}

// Shard flag ranges: GitHub Actions runs at most 256 jobs from one matrix,
// so no stage can have more shards than that.
const maxShards = 256

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
		"    [--match-all-labels] [--auto-partition-id I --auto-partition-size N] [--continue-on-error] [--json]\n"+
		"--all [--repo DIR] [--cadence C | --nightly] [--labels L ...] [--match-all-labels] [--json]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout to plan (default: the current folder)")
	hw := fs.String("hw", "HW", "hardware backend (required unless --all)", oneOf(string(policy.CPU), string(policy.CUDA), string(policy.ROCM)))
	suite := fs.String("suite", "S", "suite (= stage) name, e.g. stage-a-cpu (required unless --all)")
	all := fs.Bool("all", "plan every suite and every shard of the roster")
	sf := addSuiteFlags(fs)
	pid := fs.Int("auto-partition-id", "I", "0-based shard index", 0, maxShards-1)
	psize := fs.Int("auto-partition-size", "N", "number of shards", 1, maxShards)
	fs.Bool("list-only", "accepted and ignored: plan only ever lists (the workflows pass it)")
	fs.Bool("enable-retry", "accepted and ignored: retries change how a shard runs, not what it runs")
	fs.Int("max-attempts", "N", "accepted and ignored, like --enable-retry", 1, 10)
	asJSON := fs.Bool("json", "print JSON instead of text")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	if pid.Set != psize.Set {
		return fs.usageError("--auto-partition-id and --auto-partition-size must be specified together.")
	}
	var part *policy.Partition
	if psize.Set {
		part = &policy.Partition{ID: pid.Value, Size: psize.Value}
		if err := part.Validate(); err != nil {
			return fs.usageError("%v", err)
		}
	}
	cadence, err := sf.resolveCadence(fs)
	if err != nil {
		return fs.usageError("%v", err)
	}
	if *all {
		if fs.Given("hw") || fs.Given("suite") || part != nil {
			return fs.usageError("--all plans every suite and shard; drop --hw, --suite and --auto-partition-*")
		}
	} else if !fs.Given("hw") || !fs.Given("suite") {
		return fs.usageError("--hw and --suite are required (or --all)")
	}
	reg, err := policy.LoadRegistry(*repo) // "" is the current folder
	if err != nil {
		return fail(env, err)
	}
	base := policy.PlanRequest{
		Cadence:         cadence,
		Labels:          *sf.labels,
		MatchAllLabels:  *sf.matchAllLabels,
		ContinueOnError: *sf.continueOnError,
	}
	var reqs []policy.PlanRequest
	if *all {
		for _, st := range policy.Roster() {
			r := base
			r.HW, r.Suite = st.Backend, st.Name
			if st.Shards <= 1 {
				reqs = append(reqs, r)
				continue
			}
			for i := 0; i < st.Shards; i++ {
				r.Partition = &policy.Partition{ID: i, Size: st.Shards}
				reqs = append(reqs, r)
			}
		}
	} else {
		base.HW, base.Suite, base.Partition = policy.Backend(*hw), *suite, part
		reqs = append(reqs, base)
	}
	plans := make([]*policy.Plan, 0, len(reqs))
	for _, r := range reqs {
		p, err := policy.BuildPlan(reg, r)
		if err != nil {
			return fail(env, err)
		}
		plans = append(plans, p)
	}
	for _, w := range plans[0].Warnings {
		warn(env, w)
	}
	if *asJSON {
		if *all {
			return printJSON(env, plans)
		}
		return printJSON(env, plans[0])
	}
	for _, p := range plans {
		io.WriteString(env.Stdout, p.Text())
	}
	return 0
}
