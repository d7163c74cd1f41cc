package main

import (
	"fmt"

	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/usecase"
)

// WithPr reads a pull request from GitHub (as `miles-ci --pr N` does).
// Its body, labels, head SHA, fork flag and changed files fill the facts not
// given.
func (m *MilesCi) WithPr(
	// The pull request number.
	number int,
	// Its repository, owner/name (default radixark/miles).
	// +optional
	repo string,
	// A GitHub token, e.g. env:GITHUB_TOKEN (without one: anonymous, public repositories, 60 requests an hour).
	// +optional
	token *dagger.Secret,
	// The GitHub REST API root (GITHUB_API_URL in Actions; default https://api.github.com/).
	// +optional
	apiUrl string,
) (*MilesCi, error) {
	if number <= 0 {
		return nil, fmt.Errorf("with-pr --number %d is not a pull request number; give the number, e.g. with-pr --number 2874", number)
	}
	if err := github.CheckArgs(number, repo, apiUrl); err != nil {
		return nil, err
	}
	c := *m
	c.Pr, c.GithubRepo, c.GithubToken, c.GithubApiUrl = number, repo, token, apiUrl
	return &c, nil
}

// WithPullRequest gives the facts of the pull request a run is for.
// GitHub is not asked; each fact wins over the same fact of with-pr.
func (m *MilesCi) WithPullRequest(
	// The pull request description; its ci-sglang-pr, ci-megatron-pr and ci-image-tag lines pin the run.
	// +optional
	bodyFile *dagger.File,
	// The pull request number, for GITHUB_COMMIT_NAME (0 when the run is not for a PR).
	// +optional
	number int,
	// The tested commit, for GITHUB_COMMIT_NAME ("" is written as local).
	// +optional
	headSha string,
	// The pull request comes from a fork: the run gets no secrets.
	// +optional
	fork bool,
) (*MilesCi, error) {
	if number < 0 {
		return nil, fmt.Errorf("with-pull-request --number %d is not a pull request number; give the number, e.g. --number 2874", number)
	}
	c := *m
	c.PrBodyFile, c.PrNumber, c.HeadSha, c.Fork = bodyFile, number, headSha, fork
	return &c, nil
}

// WithDispatch gives the workflow_dispatch inputs, which win over the PR body.
func (m *MilesCi) WithDispatch(
	// ci_sglang_pr: an SGLang ref (#N, branch, tag or commit).
	// +optional
	sglangPr string,
	// ci_megatron_pr: a Megatron-LM ref.
	// +optional
	megatronPr string,
	// ci_image_tag: the CI image tag (radixark/miles, or rocm/sgl-dev for ROCm).
	// +optional
	imageTag string,
) *MilesCi {
	c := *m
	c.SglangPr, c.MegatronPr, c.ImageTag = sglangPr, megatronPr, imageTag
	return &c
}

// WithSecrets gives the secrets a stage gets (none on a fork's pull request).
func (m *MilesCi) WithSecrets(
	// WANDB_API_KEY for the GPU stages, e.g. env:WANDB_API_KEY.
	// +optional
	wandbApiKey *dagger.Secret,
	// NEON_DATABASE_URL for the CUDA stages' metric gate, e.g. env:NEON_DATABASE_URL.
	// +optional
	neonDatabaseUrl *dagger.Secret,
	// HF_TOKEN for the CPU stages, e.g. env:HF_TOKEN.
	// +optional
	hfToken *dagger.Secret,
) *MilesCi {
	c := *m
	c.WandbApiKey, c.NeonDatabaseUrl, c.HfToken = wandbApiKey, neonDatabaseUrl, hfToken
	return &c
}

// WithData mounts the runners' data folders.
func (m *MilesCi) WithData(
	// Model folder mounted at /root/models (the runners' /data/miles_ci/models).
	// +optional
	models *dagger.Directory,
	// Dataset folder mounted at /root/datasets (the runners' /data/miles_ci/datasets).
	// +optional
	datasets *dagger.Directory,
) *MilesCi {
	c := *m
	c.Models, c.Datasets = models, datasets
	return &c
}

// WithGithubEnv gives the GitHub Actions run's facts to the run phase.
// They are set in the run phase only, never in a cached layer.
func (m *MilesCi) WithGithubEnv(
	// NAME=VALUE entries: GITHUB_SHA, GITHUB_REF, GITHUB_EVENT_NAME, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_REPOSITORY, GITHUB_SERVER_URL, GITHUB_WORKFLOW, GITHUB_JOB.
	// +optional
	env []string,
) (*MilesCi, error) {
	// Bad facts fail here, before any stage is planned.
	if _, err := usecase.GitHubFromArgs(env); err != nil {
		return nil, err
	}
	c := *m
	c.GithubEnv = env
	return &c, nil
}
