package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("deps", "resolve the SGLang and Megatron-LM refs of a job (rules §7)", runDeps)
}

func runDeps(args []string, env Env) int {
	fs := newFlagSet("deps", "--backend cpu|cuda|rocm [--pr-body-file F] [--megatron-input R] [--sglang-input R] [--repo DIR]\n"+
		"    [--pr N [--github-repo OWNER/NAME]] [--json] [--github-output FILE] [--github-step-summary FILE]", env)
	backend := fs.String("backend", "B", "the job's backend", required(), oneOf(policy.BackendNames()...))
	body := fs.String("pr-body-file", "F", "file holding the pull request description (default: the text in $PR_BODY)")
	megatron := fs.String("megatron-input", "R", "the workflow_dispatch input ci_megatron_pr", fromEnv("INPUT_MEGATRON_PR"))
	sglang := fs.String("sglang-input", "R", "the workflow_dispatch input ci_sglang_pr", fromEnv("INPUT_SGLANG_PR"))
	repo := fs.String("repo", "DIR", "the Miles checkout of the tested ref; its release-lock.json, if any, pins cpu and cuda (default: the current folder; for rocm, checked when given but not read)")
	gh := addGitHubFlags(fs)
	out := addStepFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	b := policy.Backend(*backend)
	in := usecase.DepsRequest{Backend: b, SGLangInput: *sglang, MegatronInput: *megatron, Repo: *repo, Given: usecase.Given{Repo: fs.Given("repo")}}
	var err error
	if in.PRBody, _, err = readBodyOrPR(fs, gh, repo, *body); err != nil {
		return fail(env, err)
	}
	ans, err := usecase.Deps(in)
	if err != nil {
		return fail(env, err)
	}
	d := ans.Decision
	for _, w := range d.Warnings {
		warn(env, w)
	}

	var text strings.Builder
	var outputs []output
	if ans.Baked {
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
	if err := gh.writeSummary(env, ghoutput.DepsMarkdown(b, d, in.PRBody, lookups)); err != nil {
		return fail(env, err)
	}
	return out.emit(env, depsResult{d, lookups}, text.String(), outputs)
}

// depsResult is the deps command's JSON: the decision, plus what GitHub says
// of each #N ref when one was named.
type depsResult struct {
	deps.Decision
	DependencyPRs []github.DependencyPR `json:"dependency_prs,omitempty"`
}
