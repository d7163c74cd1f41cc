package usecase

import (
	"github.com/radixark/miles-ci/pipeline"
)

// GitHubEnvFlag names the module's argument that carries the GitHub run
// facts, in errors about them.
const GitHubEnvFlag = "--github-env"

// GitHubFromArgs reads the GitHub run facts the module is given as
// NAME=VALUE entries (--github-env); each name must be one of
// pipeline.GitHubVars.
func GitHubFromArgs(entries []string) (pipeline.GitHubRun, error) {
	return pipeline.ParseGitHubEnv(entries, GitHubEnvFlag)
}

// GitHubFromEnv reads the GitHub run facts from the environment of a GitHub
// Actions job (GITHUB_ACTIONS=true): the variables of pipeline.GitHubVars
// that are set, and no other. Elsewhere it reads none, so a local run's
// container has none either (Miles' runner then records no run provenance,
// as when it runs outside Actions).
func GitHubFromEnv(getenv func(string) string) (pipeline.GitHubRun, error) {
	if getenv("GITHUB_ACTIONS") != "true" {
		return pipeline.GitHubRun{}, nil
	}
	var vars []pipeline.EnvVar
	for _, name := range pipeline.GitHubVars {
		if v := getenv(name); v != "" {
			vars = append(vars, pipeline.EnvVar{Name: name, Value: v})
		}
	}
	return pipeline.NewGitHubRun(vars, "the GitHub Actions environment (GITHUB_ACTIONS=true)")
}
