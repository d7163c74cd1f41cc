package cli

import (
	"fmt"
	"strconv"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("image", "resolve the CI container image of a workflow (rules §6)", runImage)
}

// maxPRNumber is the largest pull request number GitHub can give (a 32-bit int).
const maxPRNumber = 1<<31 - 1

func runImage(args []string, env Env) int {
	fs := newFlagSet("image", "--backend cuda|rocm [--image-tag-input T] [--called-image-tag T | --lockfile FILE]\n"+
		"    [--pr-body-file F] [--pr-image-available --pr-number N] [--pr N [--github-repo OWNER/NAME]]\n"+
		"    [--json] [--github-output FILE] [--github-step-summary FILE]", env)
	backend := fs.String("backend", "B", "cuda: the CUDA/CPU workflow pr-test.yml (cpu is the same); rocm: pr-test-rocm.yml",
		required(), oneOf(string(policy.CUDA), string(policy.ROCM), string(policy.CPU)))
	input := fs.String("image-tag-input", "T", "the workflow_dispatch input ci_image_tag", fromEnv("INPUT_CI_IMAGE_TAG"))
	called := fs.String("called-image-tag", "T", "the image_tag input of a called pr-test.yml (release CI)")
	lockfile := fs.String("lockfile", "FILE", "release CI: take the called image tag from this release-lock.json's ci_image_tag")
	body := fs.String("pr-body-file", "F", "file holding the pull request description (default: the text in $PR_BODY)")
	prImage := fs.Bool("pr-image-available", "this PR's own image pr-<N> was published (default: $PR_IMAGE_AVAILABLE == true)")
	prNumber := fs.Int("pr-number", "N", "the pull request number for pr-<N>, default $PR_NUMBER", 1, maxPRNumber)
	gh := addGitHubFlagsNoCheckout(fs)
	out := addStepFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	in := usecase.ImageRequest{
		Backend:          policy.Backend(*backend),
		CalledTag:        *called,
		InputTag:         *input,
		LockFile:         *lockfile,
		PRImageAvailable: *prImage || (!fs.Given("pr-image-available") && env.Getenv("PR_IMAGE_AVAILABLE") == "true"),
		Given:            usecase.Given{PRImage: fs.Given("pr-image-available")},
	}
	if err := in.Validate(); err != nil {
		return fs.usageError("%v", err)
	}
	in.PRNumber = env.Getenv("PR_NUMBER") // deps checks it is a number
	if prNumber.Set {
		in.PRNumber = strconv.Itoa(prNumber.Value)
	}
	var err error
	var pr *github.PR
	if in.PRBody, pr, err = readBodyOrPR(fs, gh, nil, *body); err != nil {
		return fail(env, err)
	}
	if pr != nil && !prNumber.Set {
		in.PRNumber = strconv.Itoa(pr.Number)
	}
	img, err := usecase.Image(in)
	if err != nil {
		return fail(env, err)
	}
	from := string(img.Source)
	if img.Source == deps.FromPRBody {
		from = fmt.Sprintf("pr-body line %d", img.Line)
	}
	text := fmt.Sprintf("Resolved CI image: %s (tag from %s)\n", img.Image, from)
	if err := gh.writeSummary(env, ghoutput.ImageMarkdown(img, in.PRBody)); err != nil {
		return fail(env, err)
	}
	return out.emit(env, img, text, []output{{"container_image", img.Image}})
}
