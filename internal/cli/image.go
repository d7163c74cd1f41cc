package cli

import (
	"fmt"
	"strconv"

	"github.com/radixark/miles-ci/actions"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
)

func init() {
	register("image", "resolve the CI container image of a workflow (rules §6)", runImage)
}

func runImage(args []string, env Env) int {
	s := newStepIO("image", "--backend cuda|rocm [--image-tag-input T] [--called-image-tag T | --lockfile FILE] [--pr-body-file F] [--pr-image-available --pr-number N] [--pr N [--github-repo OWNER/NAME]] [--json] [--github-output FILE] [--github-step-summary FILE]", env)
	backend := s.flags.String("backend", "", "`cuda` (the CUDA/CPU workflow pr-test.yml; cpu is accepted as the same) or rocm (pr-test-rocm.yml)")
	input := s.flags.String("image-tag-input", "", "the workflow_dispatch input ci_image_tag (default $INPUT_CI_IMAGE_TAG)")
	called := s.flags.String("called-image-tag", "", "the image_tag input of a called pr-test.yml (release CI)")
	lockfile := s.flags.String("lockfile", "", "release CI: take the called image tag from this release-lock.json's ci_image_tag")
	body := s.flags.String("pr-body-file", "", "file holding the pull request description (default $PR_BODY)")
	prImage := s.flags.Bool("pr-image-available", false, "this PR's own image pr-<N> was published (default $PR_IMAGE_AVAILABLE == true)")
	prNumber := s.flags.String("pr-number", "", "the pull request number, for pr-<N> (default $PR_NUMBER)")
	gh := addGitHubStepFlags(s)
	if code, ok := s.parse(args); !ok {
		return code
	}
	b, ok := s.parseBackend(*backend, policy.CUDA, policy.ROCM, policy.CPU)
	if !ok {
		return 2
	}
	if *called != "" && *lockfile != "" {
		return s.usageError("--called-image-tag and --lockfile both name the called tag; give one")
	}
	in := deps.ImageInputs{
		Backend:          b,
		CalledTag:        *called,
		InputTag:         s.orEnv("image-tag-input", *input, "INPUT_CI_IMAGE_TAG"),
		PRImageAvailable: *prImage || (!s.set("pr-image-available") && env.Getenv("PR_IMAGE_AVAILABLE") == "true"),
		PRNumber:         s.orEnv("pr-number", *prNumber, "PR_NUMBER"),
	}
	var err error
	var pr *github.PR
	if in.PRBody, pr, err = s.readBodyOrPR(gh, *body); err != nil {
		return s.fail(err)
	}
	if pr != nil && !s.set("pr-number") {
		in.PRNumber = strconv.Itoa(pr.Number)
	}
	body0 := in.PRBody
	if b == policy.ROCM {
		// The ROCm workflow reads no ci-image-tag: line and has no PR image.
		in.PRBody = ""
		if !s.set("pr-image-available") {
			in.PRImageAvailable = false
		}
	}
	var img deps.Image
	if *lockfile != "" {
		data, readErr := readSmallFile(*lockfile)
		if readErr != nil {
			return s.fail(fmt.Errorf("--lockfile: %w; give the release branch's %s", readErr, deps.LockFileName))
		}
		lock, parseErr := deps.ParseLock(*lockfile, data)
		if parseErr != nil {
			return s.fail(parseErr)
		}
		in.CalledTag = lock.CIImageTag
		img, err = deps.ResolveImage(in)
		if err == nil {
			img.Source = deps.FromLockfile
		}
	} else {
		img, err = deps.ResolveImage(in)
	}
	if err != nil {
		return s.fail(err)
	}
	from := string(img.Source)
	if img.Source == deps.FromPRBody {
		from = fmt.Sprintf("pr-body line %d", img.Line)
	}
	text := fmt.Sprintf("Resolved CI image: %s (tag from %s)\n", img.Image, from)
	if err := gh.writeSummary(env, actions.ImageMarkdown(img, body0)); err != nil {
		return s.fail(err)
	}
	return s.emit(img, text, []output{{"container_image", img.Image}})
}
