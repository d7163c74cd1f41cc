package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/actions"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
)

func init() {
	register("deps", "resolve the SGLang and Megatron-LM refs of a job (rules §7)", runDeps)
}

func runDeps(args []string, env Env) int {
	s := newStepIO("deps", "--backend cpu|cuda|rocm [--pr-body-file F] [--megatron-input R] [--sglang-input R] [--repo DIR] [--pr N [--github-repo OWNER/NAME]] [--json] [--github-output FILE] [--github-step-summary FILE]", env)
	backend := s.flags.String("backend", "", "`cpu`, cuda or rocm")
	body := s.flags.String("pr-body-file", "", "file holding the pull request description (default $PR_BODY)")
	megatron := s.flags.String("megatron-input", "", "the workflow_dispatch input ci_megatron_pr (default $INPUT_MEGATRON_PR)")
	sglang := s.flags.String("sglang-input", "", "the workflow_dispatch input ci_sglang_pr (default $INPUT_SGLANG_PR)")
	repo := s.flags.String("repo", ".", "checkout of the tested ref; its release-lock.json, if any, pins cpu and cuda")
	gh := addGitHubStepFlags(s)
	if code, ok := s.parse(args); !ok {
		return code
	}
	b, ok := s.parseBackend(*backend, policy.CPU, policy.CUDA, policy.ROCM)
	if !ok {
		return 2
	}
	in := deps.Inputs{
		Backend:       b,
		SGLangInput:   s.orEnv("sglang-input", *sglang, "INPUT_SGLANG_PR"),
		MegatronInput: s.orEnv("megatron-input", *megatron, "INPUT_MEGATRON_PR"),
	}
	var err error
	if in.PRBody, _, err = s.readBodyOrPR(gh, *body); err != nil {
		return s.fail(err)
	}
	if b != policy.ROCM {
		// ROCm images bake their own dependencies and never read the lockfile.
		if in.Lock, err = deps.ReadLock(*repo); err != nil {
			return s.fail(err)
		}
	}
	d, err := deps.Resolve(in)
	if err != nil {
		return s.fail(err)
	}
	for _, w := range d.Warnings {
		s.warn(w)
	}

	var text strings.Builder
	var outputs []output
	if b == policy.ROCM {
		switch {
		case !d.Install:
			text.WriteString("No dependency ref named: keeping the copies baked into the image\n")
		case d.SGLang.Source == deps.FromInput || d.Megatron.Source == deps.FromInput:
			text.WriteString("Dependency refs named by the dispatch inputs: installing them over the image's baked copies\n")
		default:
			text.WriteString("Dependency refs named by the pull request body: installing them over the image's baked copies\n")
		}
		outputs = append(outputs, output{"skip_dependency_install", strconv.FormatBool(!d.Install)})
	}
	fmt.Fprintf(&text, "Resolved: megatron=%s -> fetch=%s (%s), sglang=%s -> fetch=%s (%s)\n",
		d.Megatron.Ref, d.Megatron.Fetch, d.Megatron.Origin(), d.SGLang.Ref, d.SGLang.Fetch, d.SGLang.Origin())
	lookups := gh.lookupDeps(env, d)
	for _, l := range lookups {
		fmt.Fprintf(&text, "  %s\n", l)
	}
	outputs = append(outputs,
		output{"ci_megatron_pr", d.Megatron.Fetch},
		output{"ci_sglang_pr", d.SGLang.Fetch})
	if err := gh.writeSummary(env, actions.DepsMarkdown(b, d, in.PRBody, lookups)); err != nil {
		return s.fail(err)
	}
	return s.emit(depsResult{d, lookups}, text.String(), outputs)
}

// depsResult is the deps command's JSON: the decision, plus what GitHub says
// of each #N ref when one was named.
type depsResult struct {
	deps.Decision
	DependencyPRs []github.DependencyPR `json:"dependency_prs,omitempty"`
}
