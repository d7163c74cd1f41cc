package cli

import (
	"context"
	"errors"

	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("patch-check", "apply the ROCm Megatron-LM patch, or report it present or incompatible (rules §8)", runPatchCheck)
}

// patchRunner runs the patch steps (nil: git on this host); tests replace it.
var patchRunner usecase.PatchRunner

func runPatchCheck(args []string, env Env) int {
	fs := newFlagSet("patch-check", "--megatron DIR --patch FILE [--ref R] [--dry-run] [--json] [--github-output FILE]", env)
	megatron := fs.String("megatron", "DIR", "the Megatron-LM git checkout, at the selected ref (e.g. /root/Megatron-LM)", required())
	patch := fs.String("patch", "FILE", "the patch, e.g. the workspace's "+usecase.ROCmPatchPath, required())
	ref := fs.String("ref", "R", "the selected Megatron-LM ref, for messages (e.g. #82)")
	dryRun := fs.Bool("dry-run", "only check; do not apply a patch that applies")
	out := addStepFlags(fs)
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	ans, err := usecase.PatchCheck(context.Background(), usecase.PatchCheckRequest{Megatron: *megatron, Patch: *patch, Ref: *ref, DryRun: *dryRun, Run: patchRunner})
	outputs := []output{{"rocm_patch_state", string(ans.State)}}
	if errors.Is(err, usecase.ErrPatchIncompatible) {
		// Incompatible: still tell machines the state, then fail.
		if *out.json {
			out.emit(env, ans, "", outputs)
		} else if err := out.writeOutputs(outputs); err != nil {
			return fail(env, err)
		}
	}
	if err != nil {
		return fail(env, err)
	}
	return out.emit(env, ans, ans.Text(), outputs)
}
