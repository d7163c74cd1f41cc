package deps

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// PRImageInputs are the image build inputs of rules §12.3 that the
// GPU-generation _build-pr-ci-image.yml greps the diff for (with every file
// under PRImagePatchDir). A checkout with ImageInputsFile declares its own.
var PRImageInputs = []string{"docker/Dockerfile", "docker/build.py", "docker/install-kube-tools.sh", "docker/verify_transformer_engine.py", "requirements.txt"}

// ImageInputsFile is where a checkout declares its image's build inputs
// (31f1ca9 on): INPUT_GLOBS, matched with Python's fnmatch, "the single
// source of truth for what changes the image".
const ImageInputsFile = "docker/image_inputs.py"

// BuildInputs are a checkout's image build inputs: the globs of its
// ImageInputsFile, or (the zero value) the grep of the older workflow.
type BuildInputs struct {
	Globs []string
	// globs are Globs compiled once (nil where Python's fnmatch would fail
	// to compile one: it matches nothing).
	globs []*regexp.Regexp
}

// ParseImageInputs reads INPUT_GLOBS, a tuple or list of string literals,
// from the source of a checkout's ImageInputsFile.
func ParseImageInputs(src string) (BuildInputs, error) {
	as, err := pysource.Assignments(src)
	if err != nil {
		return BuildInputs{}, fmt.Errorf("%s: %w", ImageInputsFile, err)
	}
	var found *pysource.Assignment
	for i := range as {
		if as[i].Name == "INPUT_GLOBS" {
			found = &as[i]
		}
	}
	if found == nil {
		return BuildInputs{}, fmt.Errorf("%s has no INPUT_GLOBS; miles-ci reads the image's build inputs from it (a tuple of globs such as \"docker/Dockerfile\")", ImageInputsFile)
	}
	v := found.Value
	if found.ValueErr != nil || found.Augmented || (v.Kind != pysource.TupleValue && v.Kind != pysource.ListValue) {
		return BuildInputs{}, fmt.Errorf("%s:%d: INPUT_GLOBS is not a tuple or list of string literals, which miles-ci reads", ImageInputsFile, found.Line)
	}
	in := BuildInputs{Globs: []string{}}
	for _, e := range v.Elems {
		if e.Kind != pysource.StrValue {
			return BuildInputs{}, fmt.Errorf("%s:%d: INPUT_GLOBS holds %s, not a string", ImageInputsFile, e.Line, e.Kind)
		}
		in.Globs, in.globs = append(in.Globs, e.Str), append(in.globs, globRegexp(e.Str))
	}
	return in, nil
}

// Match reports a path that feeds the CUDA image build.
func (in BuildInputs) Match(path string) bool {
	if in.Globs == nil {
		return IsPRImageInput(path)
	}
	return slices.ContainsFunc(in.globs, func(re *regexp.Regexp) bool { return re != nil && re.MatchString(path) })
}

// globRegexp is a glob as Python's fnmatch.fnmatchcase reads it: * matches
// any run of characters (a slash too), ? one, [seq] and [!seq] a class; a [
// without its ] is itself. nil when the class does not compile.
func globRegexp(pat string) *regexp.Regexp {
	var re strings.Builder
	re.WriteString("^(?s:")
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; c {
		case '*':
			re.WriteString(".*")
		case '?':
			re.WriteString(".")
		case '[':
			j := i + 1
			if j < len(pat) && pat[j] == '!' {
				j++
			}
			if j < len(pat) && pat[j] == ']' {
				j++
			}
			for j < len(pat) && pat[j] != ']' {
				j++
			}
			if j >= len(pat) {
				re.WriteString(`\[`)
				continue
			}
			class := pat[i+1 : j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			} else if strings.HasPrefix(class, "^") {
				class = `\` + class
			}
			re.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i = j
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re.WriteString(")$")
	m, err := regexp.Compile(re.String())
	if err != nil {
		return nil
	}
	return m
}

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
func DecidePRImage(isPR, fork bool, number int, changed []string, in BuildInputs) PRImage {
	if !isPR {
		return PRImage{Reason: "not a pull request: the suites use the released image"}
	}
	var inputs []string
	for _, p := range changed {
		if in.Match(p) && !slices.Contains(inputs, p) {
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
