package deps

import (
	"fmt"

	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/policy"
)

// Image repositories and default tags of rules §6 (the ImageRepo and
// DefaultImageTag of the backend profiles).
const (
	CUDAImageRepo       = policy.ImageMiles
	ROCmImageRepo       = policy.ImageROCm
	DefaultCUDAImageTag = policy.DefaultMilesImageTag
	DefaultROCmImageTag = policy.DefaultROCmImageTag
)

// dockerTag is the shape every workflow enforces for a CI image tag.
var dockerTag = lazyre.New(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// CheckImageTag returns the workflows' error for a tag that is not a Docker
// tag (for instance a full image name), or nil.
func CheckImageTag(tag string) error {
	if !dockerTag.MatchString(tag) {
		return fmt.Errorf("ci-image-tag must be a Docker tag, not a full image name: %s", tag)
	}
	return nil
}

// ImageInputs are the facts the resolve-ci-image job reads.
type ImageInputs struct {
	// Backend is cuda (the CUDA/CPU workflow; cpu is treated the same) or rocm.
	Backend policy.Backend
	// CalledTag is the image_tag input of a called workflow (release CI passes
	// the lockfile's ci_image_tag here); CUDA/CPU workflow only.
	CalledTag string
	// InputTag is the workflow_dispatch input ci_image_tag.
	InputTag string
	// PRImageAvailable is true when this PR's own image pr-<N> was published.
	PRImageAvailable bool
	// PRNumber is the pull request number, needed with PRImageAvailable.
	PRNumber string
	// PRBody is the pull request description; read for ci-image-tag on CUDA/CPU.
	PRBody string
}

// Image is a resolved CI image and where its tag came from.
type Image struct {
	// Image is the full reference, repo:tag.
	Image string `json:"image"`
	// Tag is the Docker tag alone.
	Tag string `json:"tag"`
	// Source is where the tag came from: called, input, pr-image, pr-body,
	// lockfile or default.
	Source Source `json:"source"`
	// Line is the 1-based PR-body line for source pr-body, else 0.
	Line int `json:"line"`
}

var prNumber = lazyre.New(`^[0-9]+$`)

// ResolveImage picks the CI image as resolve-ci-image does (rules §6).
// CUDA/CPU: called tag, dispatch input, pr-<N> when the PR image is
// available, the first ci-image-tag: PR-body line, then dev; image
// radixark/miles. ROCm: dispatch input, then miles-rocm720-mi35x; image
// rocm/sgl-dev. The tag must be a Docker tag in every case.
func ResolveImage(in ImageInputs) (Image, error) {
	p, known := policy.Profile(in.Backend)
	switch {
	case !known:
		return Image{}, fmt.Errorf("unknown backend %q for an image; use cuda, cpu or rocm", in.Backend)
	case !p.PRImageTag:
		if in.CalledTag != "" {
			return Image{}, fmt.Errorf("called image tag %q: the ROCm workflow has no image_tag input; pass the tag as the dispatch input instead", in.CalledTag)
		}
		if in.PRImageAvailable {
			return Image{}, fmt.Errorf("a PR image applies to the CUDA/CPU workflow only; the ROCm workflow always runs %s", p.ImageRepo)
		}
		img := Image{Tag: in.InputTag, Source: FromInput}
		if img.Tag == "" {
			img.Tag, img.Source = p.DefaultImageTag, FromDefault
		}
		return finishImage(img, p.ImageRepo)
	default:
		var img Image
		switch {
		case in.CalledTag != "":
			img = Image{Tag: in.CalledTag, Source: FromCalled}
		case in.InputTag != "":
			img = Image{Tag: in.InputTag, Source: FromInput}
		case in.PRImageAvailable:
			if !prNumber.MatchString(in.PRNumber) {
				return Image{}, fmt.Errorf("PR image is available but the PR number %q is not a number; pass the pull request number", in.PRNumber)
			}
			img = Image{Tag: "pr-" + in.PRNumber, Source: FromPRImage}
		default:
			if d, ok := FirstDirective(in.PRBody, KeyImageTag); ok {
				img = Image{Tag: d.Value, Source: FromPRBody, Line: d.Line}
			} else {
				img = Image{Tag: p.DefaultImageTag, Source: FromDefault}
			}
		}
		return finishImage(img, p.ImageRepo)
	}
}

// ReleaseImage is the image release CI runs in: the lockfile's ci_image_tag
// on radixark/miles.
func ReleaseImage(lock Lock) (Image, error) {
	return finishImage(Image{Tag: lock.CIImageTag, Source: FromLockfile}, CUDAImageRepo)
}

// FileRunImageTag is the tag a single-file run uses: the dispatch input
// (forwarded from the PR body by the comment gateway), else the first
// ci-image-tag: PR-body line, else dev.
func FileRunImageTag(inputTag, prBody string) (Image, error) {
	img := Image{Tag: inputTag, Source: FromInput}
	if img.Tag == "" {
		if d, ok := FirstDirective(prBody, KeyImageTag); ok {
			img = Image{Tag: d.Value, Source: FromPRBody, Line: d.Line}
		} else {
			img = Image{Tag: DefaultCUDAImageTag, Source: FromDefault}
		}
	}
	return finishImage(img, CUDAImageRepo)
}

func finishImage(img Image, repo string) (Image, error) {
	if err := CheckImageTag(img.Tag); err != nil {
		return Image{}, err
	}
	img.Image = repo + ":" + img.Tag
	return img, nil
}
