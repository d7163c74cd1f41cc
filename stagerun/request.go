package stagerun

import (
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/policy"
)

// Request is everything that decides one stage shard's container: the stage,
// miles-ci's own plan of the shard, the image and dependency decisions, and
// the facts of the run. Front ends fill it from their flags or arguments; the
// stage comes from the roster in one place, so a checkout's own roster can
// replace the built-in one.
type Request struct {
	// Stage is the roster entry of the stage (for a single-file run, the
	// stage whose runner runs the file).
	Stage policy.Stage
	// Plan is miles-ci's plan of the shard (policy.BuildPlan with the same
	// cadence, labels and partition); nil for a single-file run.
	Plan *policy.Plan
	// PlanUnavailable, when set, says why miles-ci has no offline plan of
	// the shard (a checkout ahead of it, rules §11.7): Plan then names only
	// the suite, cadence and partition, and the container's own
	// run_suite.py --list-only is the plan the results report on.
	PlanUnavailable string
	// Labels are the raw labels passed to run_suite.py --labels.
	Labels []string
	// MatchAllLabels passes --match-all-labels, as a manual dispatch of a GPU stage does.
	MatchAllLabels bool
	// File is the plan of a single-file run (rules §10); nil for a stage run.
	File *deps.FilePlan
	// Image is the resolved image of a CUDA or ROCm run; CPU runs use CPUImage.
	Image deps.Image
	// Deps is the dependency decision of rules §7.
	Deps deps.Decision
	// Steps are what the checkout's run workflows do (rules §11.6); the zero
	// value is read as the steps of rules §9 (policy.Tables.RunSteps).
	Steps policy.RunSteps
	// Commits are the commit ids the moving refs resolved to (see Resolve).
	Commits Commits
	// HeadSHA is the tested commit, for GITHUB_COMMIT_NAME ("" = local).
	HeadSHA string
	// PRNumber is the pull request number, for GITHUB_COMMIT_NAME ("" = not a PR).
	PRNumber string
	// Fork is set for a pull request from a fork: it gets no secrets.
	Fork bool
	// GitHub is the facts of the GitHub Actions run (GITHUB_RUN_ID and the
	// rest of GitHubVars), set in the run phase only; empty for a local run.
	GitHub GitHubRun
	// GPUs is which GPUs the container gets.
	GPUs GPUs
	// VisibleDevices are passed as CUDA_VISIBLE_DEVICES or
	// HIP_VISIBLE_DEVICES (none: unset).
	VisibleDevices device.Set
	// Models and Datasets say whether those data folders are given.
	Models, Datasets bool
	// Notes are what the request's own decisions found that the results
	// should say (summary.json notes), e.g. that CI skips the stage on the PR.
	Notes []string
	// CacheRegistry is --cache-registry: the repository the dependency
	// layers are shared through across hosts ("" = this host's engine cache
	// only); CheckCacheRegistry holds its form.
	CacheRegistry string
	// CacheKey proves the layers shared through CacheRegistry (nil: none
	// is pulled or published, CacheKeyEnv unset).
	CacheKey *CacheKey
	// TimeoutMinutes ends a stage run that takes longer (0 = the stage's
	// default, StageTimeoutMinutes); a single-file run has its own (rules §10).
	TimeoutMinutes int
}

// Commits are resolved dependency commits; "" means not resolved yet.
type Commits struct {
	// SGLang is the commit the SGLang ref names.
	SGLang string `json:"sglang"`
	// Megatron is the commit the Megatron-LM ref names.
	Megatron string `json:"megatron"`
}

// GPUs is the --gpus choice: all GPUs, none, or a set of device ids.
type GPUs struct {
	// None gives the container no GPU (an engine without GPU support).
	None bool
	// Devices are the device ids; empty with None false means all.
	Devices device.Set
}

// String is the --gpus form of the choice.
func (g GPUs) String() string {
	switch {
	case g.None:
		return "none"
	case len(g.Devices) == 0:
		return "all"
	}
	return g.Devices.String()
}
