package deps

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ROCmPatchPath is the Megatron-LM compatibility patch in the Miles workspace.
const ROCmPatchPath = "docker/amd_patch/latest/megatron.patch"

// PatchState is the outcome of the ROCm patch decision (rules §8).
type PatchState string

// The three outcomes of the ROCm patch decision.
const (
	// PatchApply: git apply --check passed, so the patch is (to be) applied.
	PatchApply PatchState = "apply"
	// PatchAlreadyPresent: the reverse check passed; the ref already contains it.
	PatchAlreadyPresent PatchState = "already-present"
	// PatchIncompatible: neither check passed; the run must fail.
	PatchIncompatible PatchState = "incompatible"
)

// ErrPatchIncompatible is the rules §8 failure; match it with errors.Is.
//
//lint:ignore ST1005 the reference's error text, verbatim (parity with the Python CI)
var ErrPatchIncompatible = errors.New("Selected Megatron ref is incompatible with the ROCm patch")

// PatchPlan is the argv of each §8 step, run in the Megatron-LM checkout.
// The same argv runs on the host (internal/hostexec) or as a container exec.
type PatchPlan struct {
	// Patch is the patch path as git is given it.
	Patch string `json:"patch"`
	// Check is `git apply --check PATCH`.
	Check []string `json:"check"`
	// ReverseCheck is `git apply --reverse --check PATCH`.
	ReverseCheck []string `json:"reverse_check"`
	// Apply is `git apply PATCH`, run only when Check passed.
	Apply []string `json:"apply"`
}

// NewPatchPlan builds the steps for a patch path. A relative path starting
// with '-' gets a "./" prefix so git can never read it as an option.
func NewPatchPlan(patch string) PatchPlan {
	if strings.HasPrefix(patch, "-") {
		patch = "./" + patch
	}
	return PatchPlan{
		Patch:        patch,
		Check:        []string{"git", "apply", "--check", patch},
		ReverseCheck: []string{"git", "apply", "--reverse", "--check", patch},
		Apply:        []string{"git", "apply", patch},
	}
}

// DecidePatch maps the two check results to the §8 state: the forward check
// wins, then the reverse check, else incompatible.
func DecidePatch(checkPassed, reversePassed bool) PatchState {
	switch {
	case checkPassed:
		return PatchApply
	case reversePassed:
		return PatchAlreadyPresent
	}
	return PatchIncompatible
}

// StepResult is what running one argv produced.
type StepResult struct {
	// ExitCode is the process exit status.
	ExitCode int
	// Output is the combined stdout and stderr.
	Output string
}

// Runner runs argv with dir as the working directory. It returns an error only
// when the command could not run at all; a non-zero exit is a StepResult.
type Runner func(ctx context.Context, dir string, argv []string) (StepResult, error)

// RunnerOf adapts a runner that returns an exit code and the output (such as
// internal/hostexec.Run, which the CLI and the tests hand in) to a Runner.
func RunnerOf(run func(ctx context.Context, dir string, argv []string) (int, string, error)) Runner {
	return func(ctx context.Context, dir string, argv []string) (StepResult, error) {
		code, out, err := run(ctx, dir, argv)
		return StepResult{ExitCode: code, Output: out}, err
	}
}

// PatchOutcome is the result of running a PatchPlan.
type PatchOutcome struct {
	// State is the §8 decision.
	State PatchState `json:"state"`
	// Applied is true when `git apply` ran and succeeded.
	Applied bool `json:"applied"`
	// Steps are the argv lists that ran, in order.
	Steps [][]string `json:"steps"`
}

// PatchMode says whether PatchPlan.Run applies a patch whose check passed.
type PatchMode int

const (
	// PatchCheckOnly runs the checks only: a dry run, or a caller that runs
	// `git apply` itself.
	PatchCheckOnly PatchMode = iota
	// PatchCheckAndApply runs `git apply` once the check passed.
	PatchCheckAndApply
)

// gitApplyNoMatch is git apply's exit status for "patch does not apply";
// other non-zero statuses (128) mean git could not read the patch at all.
const gitApplyNoMatch = 1

// Run performs the §8 steps in dir with run: check; if it fails, reverse
// check; apply when the check passed and mode is PatchCheckAndApply. ref
// names the Megatron-LM ref for messages. An incompatible patch returns the outcome and
// an error wrapping ErrPatchIncompatible.
func (p PatchPlan) Run(ctx context.Context, run Runner, dir, ref string, mode PatchMode) (PatchOutcome, error) {
	var out PatchOutcome
	step := func(argv []string) (bool, error) {
		out.Steps = append(out.Steps, argv)
		res, err := run(ctx, dir, argv)
		if err != nil {
			return false, fmt.Errorf("%s in %s: %w", strings.Join(argv, " "), dir, err)
		}
		switch res.ExitCode {
		case 0:
			return true, nil
		case gitApplyNoMatch:
			return false, nil
		}
		return false, fmt.Errorf("%s in %s failed with exit status %d (git could not read the patch; check that %s is a patch file): %s",
			strings.Join(argv, " "), dir, res.ExitCode, p.Patch, strings.TrimSpace(res.Output))
	}
	forward, err := step(p.Check)
	if err != nil {
		return out, err
	}
	reverse := false
	if !forward {
		if reverse, err = step(p.ReverseCheck); err != nil {
			return out, err
		}
	}
	out.State = DecidePatch(forward, reverse)
	switch out.State {
	case PatchIncompatible:
		if ref == "" {
			ref = "the checked-out ref"
		}
		return out, fmt.Errorf("%w: %s neither applies to nor is already present in Megatron-LM %s (%s); pick a Megatron-LM ref based on miles-main or update %s to match it",
			ErrPatchIncompatible, p.Patch, ref, dir, ROCmPatchPath)
	case PatchApply:
		if mode != PatchCheckAndApply {
			return out, nil
		}
		ok, err := step(p.Apply)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, fmt.Errorf("%s in %s failed although --check passed; the checkout changed between the steps, rerun the job", strings.Join(p.Apply, " "), dir)
		}
		out.Applied = true
	}
	return out, nil
}
