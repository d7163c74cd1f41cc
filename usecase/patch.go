package usecase

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/hostexec"
)

// PatchRunner runs one step of the ROCm patch check (git apply ...) in a
// folder; PatchCheckRequest.Run takes one.
type PatchRunner = deps.Runner

// ROCmPatchPath is the Megatron-LM compatibility patch in the Miles workspace.
const ROCmPatchPath = deps.ROCmPatchPath

// ErrPatchIncompatible is PatchCheck's error when the selected Megatron-LM
// ref is incompatible with the ROCm patch (rules §8): the answer still holds
// the state for the step outputs.
var ErrPatchIncompatible = deps.ErrPatchIncompatible

// PatchCheckRequest is what `patch-check` is given: the Megatron-LM checkout
// at the selected ref, the ROCm patch, and whether to apply it (rules §8).
type PatchCheckRequest struct {
	// Megatron is the Megatron-LM git checkout; Patch the patch file.
	Megatron, Patch string
	// Ref is the selected Megatron-LM ref, for messages only.
	Ref string
	// DryRun only checks; a patch that applies is not applied.
	DryRun bool
	// Run runs the git steps (nil: git on this host).
	Run PatchRunner
}

// Validate checks the request before any git step runs: git apply outside a
// git checkout patches whatever folder it is in, and a missing patch would
// read as "incompatible".
func (r PatchCheckRequest) Validate() error {
	if r.Megatron == "" {
		return errors.New("--megatron is required: give the Megatron-LM checkout at the selected ref, e.g. /root/Megatron-LM")
	}
	if r.Patch == "" {
		return fmt.Errorf("--patch is required: give the Miles workspace's %s", deps.ROCmPatchPath)
	}
	if err := fsinput.Folder(r.Megatron, ".git", "a git checkout"); err != nil {
		return fmt.Errorf("--megatron %w; give the root of the Megatron-LM checkout, e.g. /root/Megatron-LM", err)
	}
	if _, err := fsinput.Stat(r.Patch, fsinput.Patch); err != nil {
		return fmt.Errorf("--patch %w; give the Miles workspace's %s", err, deps.ROCmPatchPath)
	}
	return nil
}

// PatchCheckAnswer is a patch-check run, as its --json prints it.
type PatchCheckAnswer struct {
	deps.PatchOutcome
	// Patch is the absolute patch path git was given.
	Patch string `json:"patch"`
	// Megatron is the Megatron-LM checkout the steps ran in.
	Megatron string `json:"megatron"`
	// Ref is the Megatron-LM ref, as given.
	Ref string `json:"ref"`
	// DryRun is true when the patch was only checked.
	DryRun bool `json:"dry_run"`
}

// Text is the answer for a person (a run that did not fail).
func (a PatchCheckAnswer) Text() string {
	switch {
	case a.State == deps.PatchAlreadyPresent:
		return fmt.Sprintf("ROCm patch already present in %s: %s (nothing to apply)\n", a.Megatron, a.Patch)
	case a.Applied:
		return fmt.Sprintf("ROCm patch applied to %s: %s\n", a.Megatron, a.Patch)
	}
	return fmt.Sprintf("ROCm patch applies cleanly to %s: %s (dry run, not applied)\n", a.Megatron, a.Patch)
}

// PatchCheck applies the ROCm Megatron-LM patch, or finds it present or
// incompatible (rules §8). An incompatible ref is ErrPatchIncompatible with
// the answer's state set; any other error leaves the answer empty.
func PatchCheck(ctx context.Context, r PatchCheckRequest) (PatchCheckAnswer, error) {
	// git runs inside the checkout, so both paths are made absolute first.
	for _, p := range []struct {
		flag string
		path *string
	}{{"--megatron", &r.Megatron}, {"--patch", &r.Patch}} {
		if *p.path == "" {
			continue // Validate says so
		}
		abs, err := filepath.Abs(*p.path)
		if err != nil {
			return PatchCheckAnswer{}, fmt.Errorf("%s %s: %w", p.flag, *p.path, err)
		}
		*p.path = abs
	}
	if err := r.Validate(); err != nil {
		return PatchCheckAnswer{}, err
	}
	run := r.Run
	if run == nil {
		run = deps.RunnerOf(hostexec.Run)
	}
	mode := deps.PatchCheckAndApply
	if r.DryRun {
		mode = deps.PatchCheckOnly
	}
	outcome, err := deps.NewPatchPlan(r.Patch).Run(ctx, run, r.Megatron, r.Ref, mode)
	if err != nil && !errors.Is(err, ErrPatchIncompatible) {
		return PatchCheckAnswer{}, err
	}
	return PatchCheckAnswer{PatchOutcome: outcome, Patch: r.Patch, Megatron: r.Megatron, Ref: r.Ref, DryRun: r.DryRun}, err
}
