package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/policy/pysource"
	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("file-plan", "plan a single-file run, /rerun-test (rules §10)", runFilePlan)
}

// loadRegistry reads a checkout's test registry under its tables; tests may
// replace it.
var loadRegistry = func(t *policy.Tables) deps.Lookup { return t.LoadRegistry }

func runFilePlan(args []string, env Env) int {
	fs := newFlagSet("file-plan", "--file PATH [--repo DIR] [--image-tag T] [--pr-body-file F] [--rocm-image-tag T]\n"+
		"    [--pr N [--github-repo OWNER/NAME]] [--json] [--github-output FILE] [--github-step-summary FILE]", env)
	file := fs.String("file", "PATH", "the repo-relative test file, e.g. tests/e2e/precision/test_x.py", required(), fromEnv("TEST_FILE"))
	repo := fs.String("repo", "DIR", "the Miles checkout of the PR head (default: the current folder)", fromEnv("CI_SOURCE_ROOT"))
	tag := fs.String("image-tag", "T", "radixark/miles tag, the dispatch input ci_image_tag (empty: the PR body's ci-image-tag:, else dev)", fromEnv("CI_IMAGE_TAG"))
	body := fs.String("pr-body-file", "F", "file holding the pull request description (default: the text in $PR_BODY)")
	rocmTag := fs.String("rocm-image-tag", "T", "rocm/sgl-dev tag for a ROCm-only file (default "+deps.DefaultROCmImageTag+")")
	gh := addGitHubFlags(fs)
	out := addStepFlags(fs)
	pf := addPlannerFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	req := usecase.FilePlanRequest{Repo: *repo, File: *file, ImageTag: *tag, ROCmImageTag: *rocmTag, Registry: loadRegistry}
	var err error
	if req.PRBody, _, err = readBodyOrPR(fs, gh, repo, *body); err != nil {
		return fail(env, err)
	}
	if pf.checkout() {
		return filePlanWithCheckout(env, pf, req.Repo, req.File, req.ImageTag, req.PRBody, out)
	}
	ans, err := usecase.FilePlan(req)
	printMessages(env, ans.Messages)
	if err != nil {
		return fail(env, err)
	}
	plan := ans.Plan
	if err := gh.writeSummary(env, ghoutput.FilePlanMarkdown(plan, req.PRBody, ans.ImageLine)); err != nil {
		return fail(env, err)
	}
	// file_run.py writes an empty runs_on for cpu: the CPU workflow fixes its runner.
	runsOn, runsOnText := "", "(empty: a CPU file runs on the hosted ubuntu-latest runner)"
	if len(plan.RunsOn) > 0 {
		runsOn = pysource.JSONList(plan.RunsOn)
		runsOnText = runsOn
	}
	text := fmt.Sprintf("file: %s\nhw: %s\nsuite: %s\nruns_on: %s\ncontainer_image: %s\ntimeout_seconds: %d\ncommand: %s\n",
		plan.File, plan.HW, plan.Suite, runsOnText, plan.ContainerImage, plan.TimeoutSeconds, strings.Join(plan.Command, " "))
	outs := []output{
		{"hw", string(plan.HW)},
		{"suite", plan.Suite},
		{"runs_on", runsOn},
		{"container_image", plan.ContainerImage},
		{"timeout_seconds", strconv.Itoa(plan.TimeoutSeconds)},
	}
	if plan.NumGPUs > 0 {
		text += fmt.Sprintf("num_gpus: %d\n", plan.NumGPUs)
		outs = append(outs, output{"num_gpus", strconv.Itoa(plan.NumGPUs)})
	}
	return out.emit(env, plan, text, outs)
}
