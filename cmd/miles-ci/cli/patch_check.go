package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/hostexec"
)

func init() {
	register("patch-check", "apply the ROCm Megatron-LM patch, or report it present or incompatible (rules §8)", runPatchCheck)
}

// patchRunner runs the patch steps; tests may replace it.
var patchRunner = deps.RunnerOf(hostexec.Run)

// patchCheckResult is the JSON form of a patch-check run.
type patchCheckResult struct {
	deps.PatchOutcome
	// Patch is the absolute patch path git was given.
	Patch string `json:"patch"`
	// Megatron is the Megatron-LM checkout the steps ran in.
	Megatron string `json:"megatron"`
	// Ref is the Megatron-LM ref, as given by --ref.
	Ref string `json:"ref"`
	// DryRun is true when the patch was only checked.
	DryRun bool `json:"dry_run"`
}

func runPatchCheck(args []string, env Env) int {
	fs := newFlagSet("patch-check", "--megatron DIR --patch FILE [--ref R] [--dry-run] [--json] [--github-output FILE]", env)
	megatron := fs.String("megatron", "DIR", "the Megatron-LM git checkout, at the selected ref (e.g. /root/Megatron-LM)", required())
	patch := fs.String("patch", "FILE", "the patch, e.g. the workspace's "+deps.ROCmPatchPath, required())
	ref := fs.String("ref", "R", "the selected Megatron-LM ref, for messages (e.g. #82)")
	dryRun := fs.Bool("dry-run", "only check; do not apply a patch that applies")
	out := addStepFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	dir, err := filepath.Abs(*megatron)
	if err != nil {
		return fail(env, fmt.Errorf("--megatron %s: %w", *megatron, err))
	}
	// git apply outside a git checkout patches whatever folder it is in, and a
	// missing file would read as "incompatible": check the checkout first.
	if err := fsinput.Folder(dir, ".git", "a git checkout"); err != nil {
		return fail(env, fmt.Errorf("--megatron %w; give the root of the Megatron-LM checkout, e.g. /root/Megatron-LM", err))
	}
	// git runs inside the checkout, so a relative patch path must be made absolute first.
	patchPath, err := filepath.Abs(*patch)
	if err != nil {
		return fail(env, fmt.Errorf("--patch %s: %w", *patch, err))
	}
	if _, err := fsinput.Stat(patchPath, fsinput.Patch); err != nil {
		return fail(env, fmt.Errorf("--patch %w; give the Miles workspace's %s", err, deps.ROCmPatchPath))
	}
	plan := deps.NewPatchPlan(patchPath)
	mode := deps.PatchCheckAndApply
	if *dryRun {
		mode = deps.PatchCheckOnly
	}
	outcome, runErr := plan.Run(context.Background(), patchRunner, dir, *ref, mode)
	if runErr != nil && !errors.Is(runErr, deps.ErrPatchIncompatible) {
		return fail(env, runErr)
	}
	result := patchCheckResult{PatchOutcome: outcome, Patch: patchPath, Megatron: dir, Ref: *ref, DryRun: *dryRun}
	if runErr != nil {
		// Incompatible: still tell machines the state, then fail.
		if *out.json {
			out.emit(env, result, "", []output{{"rocm_patch_state", string(outcome.State)}})
		} else if err := out.writeOutputs([]output{{"rocm_patch_state", string(outcome.State)}}); err != nil {
			return fail(env, err)
		}
		return fail(env, runErr)
	}
	var text string
	switch {
	case outcome.State == deps.PatchAlreadyPresent:
		text = fmt.Sprintf("ROCm patch already present in %s: %s (nothing to apply)\n", dir, patchPath)
	case outcome.Applied:
		text = fmt.Sprintf("ROCm patch applied to %s: %s\n", dir, patchPath)
	default:
		text = fmt.Sprintf("ROCm patch applies cleanly to %s: %s (dry run, not applied)\n", dir, patchPath)
	}
	return out.emit(env, result, text, []output{{"rocm_patch_state", string(outcome.State)}})
}
