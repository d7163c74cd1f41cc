package usecase

import (
	"github.com/radixark/miles-ci/stagerun"
)

// GitHubEnvFlag names the module's argument that carries the GitHub run
// facts, in errors about them.
const GitHubEnvFlag = "--github-env"

// GitHubFromArgs reads the GitHub run facts the module is given as
// NAME=VALUE entries (--github-env); each name must be one of
// stagerun.GitHubVars.
func GitHubFromArgs(entries []string) (stagerun.GitHubRun, error) {
	return stagerun.ParseGitHubEnv(entries, GitHubEnvFlag)
}

// GitHubFromEnv reads the GitHub run facts from the environment of a GitHub
// Actions job (GITHUB_ACTIONS=true): the variables of stagerun.GitHubVars
// that are set, and no other. Elsewhere it reads none, so a local run's
// container has none either (Miles' runner then records no run provenance,
// as when it runs outside Actions).
func GitHubFromEnv(getenv func(string) string) (stagerun.GitHubRun, error) {
	if getenv("GITHUB_ACTIONS") != "true" {
		return stagerun.GitHubRun{}, nil
	}
	var vars []stagerun.EnvVar
	for _, name := range stagerun.GitHubVars {
		if v := getenv(name); v != "" {
			vars = append(vars, stagerun.EnvVar{Name: name, Value: v})
		}
	}
	return stagerun.NewGitHubRun(vars, "the GitHub Actions environment (GITHUB_ACTIONS=true)")
}
