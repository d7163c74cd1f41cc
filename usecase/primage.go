package usecase

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/policy"
)

// ImageBuildInputs are the checkout's PR image build inputs (rules §12.3):
// the INPUT_GLOBS of its docker/image_inputs.py where it has one (bounded
// read), else none, and the paths the older _build-pr-ci-image.yml greps
// for apply.
func ImageBuildInputs(repo string) (deps.BuildInputs, error) {
	if repo == "" {
		repo = "."
	}
	src, err := fsinput.ReadFile(filepath.Join(repo, filepath.FromSlash(deps.ImageInputsFile)), fsinput.TableFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return deps.BuildInputs{}, nil
		}
		return deps.BuildInputs{}, err
	}
	return deps.ParseImageInputs(string(src))
}

// ChangedPaths are the paths a `git diff --name-status -z -M` names, both
// of a rename.
func ChangedPaths(diff []byte) ([]string, error) {
	entries, err := policy.ParseNameStatus(diff)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Paths...)
	}
	return paths, nil
}
