package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/radixark/miles-ci/deps"
)

func init() {
	register("patch-check", "apply the ROCm Megatron-LM patch, or report it present or incompatible (rules §8)", runPatchCheck)
}

// patchRunner runs the patch steps; tests may replace it.
var patchRunner deps.Runner = deps.HostRunner

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
	s := newStepIO("patch-check", "--megatron DIR --patch FILE [--ref R] [--dry-run] [--json] [--github-output FILE]", env)
	megatron := s.flags.String("megatron", "", "the Megatron-LM checkout, at the selected ref (e.g. /root/Megatron-LM)")
	patch := s.flags.String("patch", "", "the patch, e.g. the workspace's "+deps.ROCmPatchPath)
	ref := s.flags.String("ref", "", "the selected Megatron-LM ref, for messages (e.g. #82)")
	dryRun := s.flags.Bool("dry-run", false, "only check; do not apply a patch that applies")
	if code, ok := s.parse(args); !ok {
		return code
	}
	if *megatron == "" || *patch == "" {
		return s.usageError("--megatron and --patch are required")
	}
	dir, err := filepath.Abs(*megatron)
	if err != nil {
		return s.fail(fmt.Errorf("--megatron %s: %w", *megatron, err))
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return s.fail(fmt.Errorf("--megatron %s is not a directory; give the Megatron-LM checkout", *megatron))
	}
	// git runs inside the checkout, so a relative patch path must be made absolute first.
	patchPath, err := filepath.Abs(*patch)
	if err != nil {
		return s.fail(fmt.Errorf("--patch %s: %w", *patch, err))
	}
	if info, err := os.Stat(patchPath); err != nil || !info.Mode().IsRegular() {
		return s.fail(fmt.Errorf("--patch %s is not a file; give the Miles workspace's %s", *patch, deps.ROCmPatchPath))
	}
	plan := deps.NewPatchPlan(patchPath)
	outcome, runErr := plan.Run(context.Background(), patchRunner, dir, *ref, !*dryRun)
	if runErr != nil && !errors.Is(runErr, deps.ErrPatchIncompatible) {
		return s.fail(runErr)
	}
	result := patchCheckResult{PatchOutcome: outcome, Patch: patchPath, Megatron: dir, Ref: *ref, DryRun: *dryRun}
	if runErr != nil {
		// Incompatible: still tell machines the state, then fail.
		if s.json {
			s.emit(result, "", []output{{"rocm_patch_state", string(outcome.State)}})
		} else if err := s.writeOutputs([]output{{"rocm_patch_state", string(outcome.State)}}); err != nil {
			return s.fail(err)
		}
		return s.fail(runErr)
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
	return s.emit(result, text, []output{{"rocm_patch_state", string(outcome.State)}})
}
