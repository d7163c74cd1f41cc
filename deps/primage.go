package deps

import (
	"fmt"
	"slices"
	"strings"
)

// PRImageInputs are the image build inputs of rules §12.3: what
// docker/image_inputs.py hashes at 31f1ca9 and what the GPU-generation
// _build-pr-ci-image.yml greps the diff for.
var PRImageInputs = []string{"docker/Dockerfile", "docker/build.py", "docker/install-kube-tools.sh", "docker/verify_transformer_engine.py", "requirements.txt"}

// PRImageDockerfile is the Dockerfile a PR image is built from, the
// checkout its build context (_build-pr-ci-image.yml).
const PRImageDockerfile = "docker/Dockerfile"

// PRImagePatchDir is the folder of image patches, every file of which is a
// build input.
const PRImagePatchDir = "docker/patch/"

// PRImage is the decision of the PR image job.
type PRImage struct {
	// Build is set when the PR builds its own image, tagged Tag (pr-N).
	Build bool   `json:"build"`
	Tag   string `json:"tag,omitempty"`
	// Inputs are the changed build inputs.
	Inputs []string `json:"inputs,omitempty"`
	// Reason says why, as the workflow's notices do.
	Reason string `json:"reason"`
}

// IsPRImageInput reports a path that feeds the CUDA image build.
func IsPRImageInput(path string) bool {
	return slices.Contains(PRImageInputs, path) || strings.HasPrefix(path, PRImagePatchDir)
}

// DecidePRImage decides the PR image job (rules §12.3): only a pull request
// from the same repository whose changed paths touch the image's build
// inputs builds radixark/miles:pr-N; a fork PR, a cron or a dispatch keeps
// the released image.
func DecidePRImage(isPR, fork bool, number int, changed []string) PRImage {
	if !isPR {
		return PRImage{Reason: "not a pull request: the suites use the released image"}
	}
	var inputs []string
	for _, p := range changed {
		if IsPRImageInput(p) && !slices.Contains(inputs, p) {
			inputs = append(inputs, p)
		}
	}
	switch {
	case len(inputs) == 0:
		return PRImage{Reason: "the image build inputs match the base branch: the suites use the released image"}
	case fork:
		return PRImage{Inputs: inputs, Reason: "a fork PR cannot publish an image: the suites use the released image"}
	case number <= 0:
		return PRImage{Inputs: inputs, Reason: "the build inputs changed but the pull request has no number to tag pr-N with; give --pr or --pr-number"}
	}
	tag := fmt.Sprintf("pr-%d", number)
	return PRImage{Build: true, Tag: tag, Inputs: inputs, Reason: fmt.Sprintf("the image build inputs changed (%s): build %s:%s from docker/Dockerfile", strings.Join(inputs, ", "), CUDAImageRepo, tag)}
}
