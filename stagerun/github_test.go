package stagerun_test

import (
	"slices"
	"strings"
	"testing"

	. "github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

// fullRun is every GitHub run fact, as a scheduled run of main gives them.
var fullRun = []string{
	"GITHUB_SHA=0123456789abcdef0123456789abcdef01234567", "GITHUB_REF=refs/heads/main", "GITHUB_EVENT_NAME=schedule",
	"GITHUB_RUN_ID=16273849506", "GITHUB_RUN_ATTEMPT=2", "GITHUB_REPOSITORY=radixark/miles",
	"GITHUB_SERVER_URL=https://github.com", "GITHUB_WORKFLOW=PR Test", "GITHUB_JOB=stage-c-4-gpu-h200",
}

// TestParseGitHubEnv checks the facts are read in allowlist order whatever
// order they are given in, and that empty values stay unset.
func TestParseGitHubEnv(t *testing.T) {
	given := slices.Clone(fullRun)
	slices.Reverse(given)
	g, err := ParseGitHubEnv(given, "--github-env")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range g.Env() {
		got = append(got, e.Name+"="+e.Value)
	}
	if !slices.Equal(got, fullRun) {
		t.Errorf("wanted %q, got %q", fullRun, got)
	}
	if g.RunID != "16273849506" || g.RunAttempt != "2" {
		t.Errorf("wanted run 16273849506 attempt 2, got %+v", g)
	}
	empty, err := ParseGitHubEnv([]string{"GITHUB_REF="}, "--github-env")
	if err != nil || len(empty.Env()) != 0 {
		t.Errorf("wanted an empty value to leave GITHUB_REF unset, got %v, %v", empty.Env(), err)
	}
}

// TestParseGitHubEnvErrors checks each bad entry is an error that names the
// variable and the fix, and never repeats a value it does not know.
func TestParseGitHubEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		name, entry, want string
	}{
		{"not on the list", "GITHUB_TOKEN=ghp_secretvalue", `--github-env: "GITHUB_TOKEN" is not a GitHub run fact a stage container takes; give only GITHUB_SHA, GITHUB_REF, GITHUB_EVENT_NAME, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_REPOSITORY, GITHUB_SERVER_URL, GITHUB_WORKFLOW, GITHUB_JOB`},
		{"set by miles-ci", "GITHUB_COMMIT_NAME=abc_42", "--github-env: GITHUB_COMMIT_NAME is set by miles-ci itself in every stage container; drop it"},
		{"no equals", "ghp_secretvalue", "--github-env: an entry of 15 bytes is not NAME=VALUE; give e.g. GITHUB_RUN_ID=1234567890 (a value holding a comma goes in double quotes, CSV style)"},
		{"no name", "=1", "--github-env: an entry of 2 bytes is not NAME=VALUE; give e.g. GITHUB_RUN_ID=1234567890 (a value holding a comma goes in double quotes, CSV style)"},
		{"newline", "GITHUB_WORKFLOW=PR\nGITHUB_TOKEN=x", `--github-env: GITHUB_WORKFLOW "PR\nGITHUB_TOKEN=x" holds a control character (a newline or NUL); give the one-line value GitHub Actions sets`},
		{"nul", "GITHUB_REF=refs/heads/a\x00b", `--github-env: GITHUB_REF "refs/heads/a\x00b" holds a control character (a newline or NUL); give the one-line value GitHub Actions sets`},
		{"too long", "GITHUB_WORKFLOW=" + strings.Repeat("w", MaxGitHubValue+1), "--github-env: GITHUB_WORKFLOW is 1025 bytes, more than the 1024 a GitHub run fact holds; give the value GitHub Actions sets"},
		{"run id", "GITHUB_RUN_ID=12a", `--github-env: GITHUB_RUN_ID "12a" is not a run id; give the digits of github.run_id, e.g. 1234567890`},
		{"attempt", "GITHUB_RUN_ATTEMPT=0", `--github-env: GITHUB_RUN_ATTEMPT "0" is not a run attempt; give github.run_attempt, a number from 1`},
		{"sha", "GITHUB_SHA=abc", `--github-env: GITHUB_SHA "abc" is not a full commit id; give the 40 lowercase hex digits of github.sha`},
		{"ref", "GITHUB_REF=main", `--github-env: GITHUB_REF "main" is not a full ref; give github.ref, e.g. refs/heads/main or refs/pull/42/merge`},
		{"event", "GITHUB_EVENT_NAME=Push!", `--github-env: GITHUB_EVENT_NAME "Push!" is not an event name; give github.event_name, e.g. pull_request or schedule`},
		{"repository", "GITHUB_REPOSITORY=miles", `--github-env: GITHUB_REPOSITORY "miles" is not a repository; give github.repository, owner/name such as radixark/miles`},
		{"server credentials", "GITHUB_SERVER_URL=https://u:p@github.com", `--github-env: GITHUB_SERVER_URL "https://***@github.com" is not a server URL; give github.server_url, e.g. https://github.com (no credentials, path or query)`},
		{"job", "GITHUB_JOB=a job", `--github-env: GITHUB_JOB "a job" is not a job id; give github.job, the job's key in the workflow`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGitHubEnv([]string{tc.entry}, "--github-env")
			if err == nil || err.Error() != tc.want {
				t.Fatalf("wanted %q, got %v", tc.want, err)
			}
			if strings.Contains(err.Error(), "ghp_secretvalue") {
				t.Errorf("the error repeats a value off the list: %v", err)
			}
		})
	}
	want := "--github-env: GITHUB_RUN_ID is given twice; give each variable once"
	if _, err := ParseGitHubEnv([]string{"GITHUB_RUN_ID=1", "GITHUB_RUN_ID=2"}, "--github-env"); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}

// TestBuildGitHubRun checks the run facts go to the run env only, after
// what miles-ci sets, and leave every step and the static env as they were:
// a new run id changes no cached layer.
func TestBuildGitHubRun(t *testing.T) {
	for _, stage := range []string{"stage-c-4-gpu-h200", "stage-b-cpu", "stage-c-4-gpu-mi350"} {
		t.Run(stage, func(t *testing.T) {
			in := usecase.Inputs{Stage: stage, Labels: []string{"run-ci-megatron"}, HeadSHA: "abc", PRNumber: "42"}
			if stage != "stage-b-cpu" {
				in.Shard = shard(1)
			}
			base := stageRequest(t, in)
			base.Commits = Commits{SGLang: sglangHead, Megatron: megatronHead}
			plain := build(t, base)

			withRun := func(entries ...string) Spec {
				t.Helper()
				req := base
				var err error
				if req.GitHub, err = usecase.GitHubFromArgs(entries); err != nil {
					t.Fatal(err)
				}
				return build(t, req)
			}
			run1 := withRun(fullRun...)
			run2 := withRun(append(slices.Clone(fullRun[:3]), append([]string{"GITHUB_RUN_ID=99", "GITHUB_RUN_ATTEMPT=1"}, fullRun[5:]...)...)...)
			for _, s := range []Spec{run1, run2} {
				if !slices.Equal(listing(s), listing(plain)) || !slices.Equal(s.Env, plain.Env) || !slices.Equal(s.Caches, plain.Caches) {
					t.Fatalf("the run facts changed the steps, env or caches:\n%s", strings.Join(listing(s), "\n"))
				}
				if !slices.Equal(s.RunEnv[:len(plain.RunEnv)], plain.RunEnv) {
					t.Errorf("wanted the run env to start with %v, got %v", plain.RunEnv, s.RunEnv)
				}
				for _, st := range s.Steps {
					for _, e := range st.Env {
						if strings.HasPrefix(e.Name, "GITHUB_RUN") {
							t.Errorf("step %q sets %s", st.Name, e.Name)
						}
					}
				}
			}
			got := run1.RunEnv[len(plain.RunEnv):]
			if len(got) != len(fullRun) || got[3] != (EnvVar{"GITHUB_RUN_ID", "16273849506"}) || got[4] != (EnvVar{"GITHUB_RUN_ATTEMPT", "2"}) {
				t.Errorf("wanted the nine facts after the run env, got %v", got)
			}
			if run2.RunEnv[len(plain.RunEnv)+3].Value != "99" {
				t.Errorf("wanted GITHUB_RUN_ID=99, got %v", run2.RunEnv)
			}
		})
	}
}

// TestBuildRejectsBadGitHubRun checks Build itself refuses a bad fact a
// front end put in the request without usecase.
func TestBuildRejectsBadGitHubRun(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-cpu"})
	req.GitHub.RunID = "1\n2"
	want := `GitHub run facts: GITHUB_RUN_ID "1\n2" holds a control character (a newline or NUL); give the one-line value GitHub Actions sets`
	if _, err := Build(req); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}

// FuzzParseGitHubEnv checks the parser never panics, and that what it
// accepts is on the allowlist, one line each and bounded.
func FuzzParseGitHubEnv(f *testing.F) {
	for _, e := range fullRun {
		f.Add(e, "GITHUB_RUN_ID=1")
	}
	f.Add("GITHUB_TOKEN=x", "GITHUB_REF=refs/heads/a\nb")
	f.Fuzz(func(t *testing.T, a, b string) {
		g, err := ParseGitHubEnv([]string{a, b}, "--github-env")
		if err != nil {
			return
		}
		if err := g.Check(); err != nil {
			t.Fatalf("accepted %q, %q but Check says %v", a, b, err)
		}
		for _, e := range g.Env() {
			if !slices.Contains(GitHubVars, e.Name) || len(e.Value) > MaxGitHubValue || strings.ContainsAny(e.Value, "\n\r\x00") {
				t.Fatalf("accepted %s=%q", e.Name, e.Value)
			}
		}
	})
}
