package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/actions"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/policy"
)

func init() {
	register("file-plan", "plan a single-file run, /rerun-test (rules §10)", runFilePlan)
}

// fileRegistrations looks up a file's registrations; tests may replace it.
var fileRegistrations deps.Lookup = policy.CollectFile

func runFilePlan(args []string, env Env) int {
	s := newStepIO("file-plan", "--file PATH [--repo DIR] [--image-tag T] [--pr-body-file F] [--rocm-image-tag T] [--pr N [--github-repo OWNER/NAME]] [--json] [--github-output FILE] [--github-step-summary FILE]", env)
	file := s.flags.String("file", "", "the repo-relative test file, e.g. tests/e2e/precision/test_x.py (default $TEST_FILE)")
	repo := s.flags.String("repo", ".", "checkout of the PR head (default $CI_SOURCE_ROOT, else .)")
	tag := s.flags.String("image-tag", "", "radixark/miles tag, the dispatch input ci_image_tag (default $CI_IMAGE_TAG; empty: the PR body's ci-image-tag:, else dev)")
	body := s.flags.String("pr-body-file", "", "file holding the pull request description (default $PR_BODY)")
	rocmTag := s.flags.String("rocm-image-tag", "", "rocm/sgl-dev tag for a ROCm-only file (default "+deps.DefaultROCmImageTag+")")
	gh := addGitHubStepFlags(s)
	if code, ok := s.parse(args); !ok {
		return code
	}
	req := deps.FileRequest{
		Root:         s.orEnv("repo", *repo, "CI_SOURCE_ROOT"),
		File:         s.orEnv("file", *file, "TEST_FILE"),
		ImageTag:     s.orEnv("image-tag", *tag, "CI_IMAGE_TAG"),
		ROCmImageTag: *rocmTag,
	}
	if req.Root == "" {
		req.Root = "."
	}
	if req.File == "" {
		return s.usageError("--file is required")
	}
	var err error
	if req.PRBody, _, err = s.readBodyOrPR(gh, *body); err != nil {
		return s.fail(err)
	}
	if req.Tables, err = loadTables(s.env, req.Root); err != nil {
		return s.fail(err)
	}
	plan, err := deps.PlanFile(req, fileRegistrations)
	if err != nil {
		return s.fail(err)
	}
	imageLine := 0
	if d, ok := deps.FirstDirective(req.PRBody, deps.KeyImageTag); ok && plan.ImageSource == deps.FromPRBody {
		imageLine = d.Line
	}
	if err := gh.writeSummary(env, actions.FilePlanMarkdown(plan, req.PRBody, imageLine)); err != nil {
		return s.fail(err)
	}
	runsOn := pythonJSONList(plan.RunsOn)
	text := fmt.Sprintf("file: %s\nhw: %s\nsuite: %s\nruns_on: %s\ncontainer_image: %s\ntimeout_seconds: %d\ncommand: %s\n",
		plan.File, plan.HW, plan.Suite, runsOn, orNone(plan.ContainerImage), plan.TimeoutSeconds, strings.Join(plan.Command, " "))
	return s.emit(plan, text, []output{
		{"hw", string(plan.HW)},
		{"suite", plan.Suite},
		{"runs_on", runsOn},
		{"container_image", plan.ContainerImage},
		{"timeout_seconds", strconv.Itoa(plan.TimeoutSeconds)},
	})
}

// pythonJSONList renders labels as Python's json.dumps does, the form
// file_run.py writes: ["h200", "2gpu"].
func pythonJSONList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
