package usecase

import (
	"slices"
	"testing"

	"github.com/radixark/miles-ci/stagerun"
)

// TestGitHubFromEnv checks the facts come from the environment of an
// Actions job only, and only the allowlisted ones.
func TestGitHubFromEnv(t *testing.T) {
	vars := map[string]string{
		"GITHUB_RUN_ID": "16273849506", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_REF": "refs/pull/42/merge", "GITHUB_TOKEN": "ghs_neverpassed", "GITHUB_ACTOR": "octocat",
		"GITHUB_WORKSPACE": "/home/runner/work/miles/miles",
	}
	getenv := func(k string) string { return vars[k] }
	local, err := GitHubFromEnv(getenv)
	if err != nil || local != (stagerun.GitHubRun{}) {
		t.Errorf("wanted no facts outside Actions, got %+v, %v", local, err)
	}
	vars["GITHUB_ACTIONS"] = "true"
	g, err := GitHubFromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := []stagerun.EnvVar{{Name: "GITHUB_REF", Value: "refs/pull/42/merge"}, {Name: "GITHUB_EVENT_NAME", Value: "pull_request"},
		{Name: "GITHUB_RUN_ID", Value: "16273849506"}, {Name: "GITHUB_RUN_ATTEMPT", Value: "1"}}
	if !slices.Equal(g.Env(), want) {
		t.Errorf("wanted %v, got %v", want, g.Env())
	}
	vars["GITHUB_RUN_ATTEMPT"] = "first"
	wantErr := `the GitHub Actions environment (GITHUB_ACTIONS=true): GITHUB_RUN_ATTEMPT "first" is not a run attempt; give github.run_attempt, a number from 1`
	if _, err := GitHubFromEnv(getenv); err == nil || err.Error() != wantErr {
		t.Errorf("wanted %q, got %v", wantErr, err)
	}
}

// TestStageGitHubRun checks the request builder carries the facts and
// refuses a bad one a front end set directly.
func TestStageGitHubRun(t *testing.T) {
	g, err := GitHubFromArgs([]string{"GITHUB_RUN_ID=7", "GITHUB_SHA=0123456789abcdef0123456789abcdef01234567"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := Stage(Inputs{Repo: "../testdata/miles", Stage: "stage-b-cpu", GitHub: g})
	if err != nil {
		t.Fatal(err)
	}
	if req.GitHub != g {
		t.Errorf("wanted %+v, got %+v", g, req.GitHub)
	}
	g.RunID = "seven"
	want := `GitHub run facts: GITHUB_RUN_ID "seven" is not a run id; give the digits of github.run_id, e.g. 1234567890`
	if _, err := Stage(Inputs{Repo: "../testdata/miles", Stage: "stage-b-cpu", GitHub: g}); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}
