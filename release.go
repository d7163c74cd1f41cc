package main

import (
	"context"
	"fmt"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// Release runs stages as release CI does.
// The cadence is release, with the dependency commits and CI image of a
// release-lock.json.
func (m *MilesCi) Release(
	ctx context.Context,
	// The release-lock.json (default: the checkout's); the flag is not --lock, which the dagger CLI takes.
	// +optional
	lockfile *dagger.File,
) (*Release, error) {
	if m.Pr != 0 {
		return nil, usecase.ErrReleasePR
	}
	what := "--lockfile"
	if lockfile == nil {
		lockfile, what = m.Source.File(deps.LockFileName), "the checkout's "+deps.LockFileName
	}
	text, err := readFile(ctx, lockfile, fsinput.Lockfile, what)
	if err != nil {
		return nil, fmt.Errorf("%w; give --lockfile or run on a release branch", err)
	}
	if _, err := usecase.ParseReleaseLock(deps.LockFileName, text); err != nil {
		return nil, err
	}
	return &Release{Miles: m, Lock: text}, nil
}

// Release is a release run of Miles CI, pinned by a lockfile.
type Release struct {
	// +private
	Miles *MilesCi
	// +private
	Lock string
}

// Stage selects a stage of the release run (cadence release, no labels).
func (r *Release) Stage(
	ctx context.Context,
	// Stage (= suite) name, e.g. stage-c-4-gpu-h200.
	name string,
) (*Stage, error) {
	return r.Miles.stage(ctx, stageArgs{name: name, cadence: string(policy.Release), releaseLock: r.Lock})
}

// ReleaseLock returns a release-lock.json for a release branch.
// It holds the SGLang and Megatron-LM branch heads resolved to commits now,
// and the CI image tag.
// +cache="never"
func (m *MilesCi) ReleaseLock(
	ctx context.Context,
	// The release branch, release/vX.Y.Z.
	branch string,
	// The SGLang branch to freeze.
	// +optional
	// +default="sglang-miles"
	sglangRef string,
	// The Megatron-LM branch to freeze.
	// +optional
	// +default="miles-main"
	megatronRef string,
	// The CI image tag (default: release-vX.Y.Z-ci from the branch).
	// +optional
	imageTag string,
) (*dagger.File, error) {
	s, err := m.newSession(ctx, false)
	if err != nil {
		return nil, err
	}
	defer s.close()
	text, err := usecase.BranchCut(ctx, s.container(), usecase.BranchCutRequest{Branch: branch, SGLangRef: sglangRef, MegatronRef: megatronRef, ImageTag: imageTag}, nonce(""))
	if err != nil {
		return nil, err
	}
	return dag.File(deps.LockFileName, text), nil
}
