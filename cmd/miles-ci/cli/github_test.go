package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/github/githubtest"
	"github.com/radixark/miles-ci/internal/testfiles"
)

func apiFixtures() string { return filepath.Join("..", "..", "..", "testdata", "github") }

// runWithEnv runs one invocation with the given environment only.
func runWithEnv(args []string, vars map[string]string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Run(args, Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return vars[k] }})
	return code, stdout.String(), stderr.String()
}

// TestPRCommands runs each command with --pr against the stand-in API and
// compares its output with testdata/github/NAME.txt (the README shows them).
func TestPRCommands(t *testing.T) {
	repo := milesRepo()
	tests := []struct {
		name string
		args []string
	}{
		{"policy", []string{"policy", "--pr", "2874", "--repo", repo}},
		{"policy-fork", []string{"policy", "--pr", "2901", "--repo", repo}},
		{"plan", []string{"plan", "--pr", "2874", "--repo", repo, "--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--auto-partition-id", "0", "--auto-partition-size", "3"}},
		{"plan-all", []string{"plan", "--pr", "2874", "--repo", repo, "--all"}},
		{"explain", []string{"explain", "--pr", "2874", "--repo", repo, "--file", "tests/e2e/megatron/test_qwen3_4b_ppo.py"}},
		{"deps", []string{"deps", "--backend", "cuda", "--pr", "2874", "--repo", repo}},
		{"image", []string{"image", "--backend", "cuda", "--pr", "2950"}},
		{"file-plan", []string{"file-plan", "--pr", "2950", "--repo", repo, "--file", "tests/e2e/sglang/test_sglang_weight_update.py"}},
		{"run", []string{"run", "--pr", "2874", "--repo", repo, "--stage", "stage-c-8-gpu-h100", "--shard", "1", "--gpus", "none", "--dry-run"}},
		{"file-run-fork", []string{"file-run", "--pr", "2901", "--repo", repo, "--file", "tests/e2e/megatron/test_glm4_9b.py", "--gpus", "none", "--dry-run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := githubtest.Start(apiFixtures())
			defer s.Close()
			code, stdout, stderr := runWithEnv(tt.args, map[string]string{"GITHUB_API_URL": s.URL})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := "$ miles-ci " + strings.Join(tt.args, " ") + "\n" + stdout
			if stderr != "" {
				got += "--- stderr\n" + stderr
			}
			got = strings.ReplaceAll(got, repo, "testdata/miles")
			testfiles.Golden(t, filepath.Join("testdata", "github", tt.name+".txt"), got)
		})
	}
}

func TestPRErrors(t *testing.T) {
	repo := milesRepo()
	tests := []struct {
		name     string
		args     []string
		limited  bool
		wantCode int
		want     string // stderr prefix
	}{
		{name: "missing PR", args: []string{"policy", "--pr", "99999", "--repo", repo}, wantCode: 1,
			want: "::error::reading pull request radixark/miles#99999: not found (404); check --pr and --github-repo; a private repository also needs GITHUB_TOKEN or GH_TOKEN: GET "},
		{name: "rate limit", args: []string{"plan", "--pr", "2874", "--repo", repo, "--all"}, limited: true, wantCode: 1,
			want: "::error::reading pull request radixark/miles#2874: GitHub API rate limit exceeded (60 requests an hour, resets at 15:30:00 UTC); set GITHUB_TOKEN or GH_TOKEN to a token (5,000 requests an hour instead of 60), or wait until then: "},
		// A bad flag value is a usage error, before GitHub is asked.
		{name: "not a number", args: []string{"deps", "--backend", "cuda", "--pr", "abc"}, wantCode: 2,
			want: "miles-ci deps: --pr \"abc\" is not a pull request number; give the number, e.g. --pr 2874\n"},
		{name: "zero", args: []string{"policy", "--pr", "0", "--repo", repo}, wantCode: 2,
			want: "miles-ci policy: --pr \"0\" is not a pull request number; give the number, e.g. --pr 2874\n"},
		// Alone, --github-repo would be ignored: a usage error instead.
		{name: "repository without --pr", args: []string{"image", "--backend", "cuda", "--github-repo", "a/b"}, wantCode: 2,
			want: "miles-ci image: --github-repo names the repository of --pr; give --pr N too\n"},
		{name: "run: repository without --pr", args: []string{"run", "--repo", repo, "--stage", "stage-b-cpu", "--github-repo", "a/b", "--dry-run"}, wantCode: 2,
			want: "miles-ci run: --github-repo names the repository of --pr; give --pr N too\n"},
		{name: "bad repository", args: []string{"explain", "--pr", "1", "--github-repo", "miles", "--repo", repo, "--file", "tests/e2e/megatron/test_glm4_9b.py"}, wantCode: 2,
			want: "miles-ci explain: --github-repo \"miles\" is not a repository; give owner/name, e.g. radixark/miles\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := githubtest.Start(apiFixtures())
			defer s.Close()
			s.RateLimited = tt.limited
			code, _, stderr := runWithEnv(tt.args, map[string]string{"GITHUB_API_URL": s.URL})
			stderr = dropNotices(stderr)
			if code != tt.wantCode || !strings.HasPrefix(stderr, tt.want) {
				t.Fatalf("wanted exit %d and stderr starting %q, got %d and %q", tt.wantCode, tt.want, code, stderr)
			}
		})
	}
}

// Inside Actions the event payload gives the PR's facts: only the changed
// files come from the API.
func TestPREventPayload(t *testing.T) {
	s := githubtest.Start(apiFixtures())
	defer s.Close()
	env := map[string]string{
		"GITHUB_API_URL":    s.URL,
		"GITHUB_EVENT_PATH": filepath.Join(apiFixtures(), "events", "pull_request.json"),
		"GITHUB_TOKEN":      "t0k",
	}
	code, stdout, stderr := runWithEnv([]string{"policy", "--pr", "2874", "--repo", milesRepo(), "--json"}, env)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if s.Requests != 3 {
		t.Errorf("wanted 3 requests (the files, 3 pages; no PR request), got %d", s.Requests)
	}
	if !strings.Contains(stderr, "from the event)") || !strings.Contains(stdout, `"skipped_stages": [`) {
		t.Errorf("wanted the facts from the event payload, got stdout %q stderr %q", stdout, stderr)
	}
	for _, tok := range s.Tokens {
		if tok != "Bearer t0k" {
			t.Errorf("wanted the token on every request, got %q", tok)
		}
	}
	if strings.Contains(stdout+stderr, "t0k") {
		t.Error("the token was printed")
	}
}

func TestStepSummaryFiles(t *testing.T) {
	s := githubtest.Start(apiFixtures())
	defer s.Close()
	dir := t.TempDir()
	viaEnv, viaFlag := filepath.Join(dir, "env.md"), filepath.Join(dir, "flag.md")
	env := map[string]string{"GITHUB_API_URL": s.URL, "GITHUB_STEP_SUMMARY": viaEnv}
	if code, _, stderr := runWithEnv([]string{"policy", "--pr", "2874", "--repo", milesRepo()}, env); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := runWithEnv([]string{"deps", "--backend", "cuda", "--pr", "2874", "--repo", milesRepo(), "--github-step-summary", viaFlag}, env); code != 0 {
		t.Fatal(stderr)
	}
	// A failed run's report exits as the run did (1 here).
	if code, _, stderr := runWithEnv([]string{"report", "--results", filepath.Join("..", "..", "..", "report", "testdata", "results")}, env); code != 1 {
		t.Fatalf("wanted exit 1, got %d: %s", code, stderr)
	}
	got, err := os.ReadFile(viaEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Miles CI policy", "```mermaid", "| `stage-c-8-gpu-h100` | cuda |", "### `stage-c-4-gpu-h200` (cuda), shard 1/3: ❌ failed"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("$GITHUB_STEP_SUMMARY lacks %q:\n%s", want, got)
		}
	}
	deps, err := os.ReadFile(viaFlag)
	if err != nil {
		t.Fatal(err)
	}
	if want := "| `sgl-project/sglang` | `#1234` | `refs/pull/1234/head` | PR body line 7: `ci-sglang-pr: #1234` | sgl-project/sglang#1234: \"[miles] expose the weight-update barrier\" (open, head c0ffee123456) |"; !bytes.Contains(deps, []byte(want)) {
		t.Errorf("--github-step-summary lacks %q:\n%s", want, deps)
	}
}

func TestRegistryErrorAnnotatesTheFile(t *testing.T) {
	tests := []struct {
		name, src, want string
		whole           bool // want is all of stderr, not its start
	}{
		{name: "not a literal (docs/github.md)",
			src:  "import os\n\nregister_cuda_ci(est_time=60*10, suite=\"stage-c-2-gpu-h200\", labels=[\"megatron\"])\n",
			want: "::error file=tests/e2e/test_x.py,line=3::tests/e2e/test_x.py: est_time in register_cuda_ci() must be a literal constant (line 3); write the value itself, "},
		{name: "not Python (docs/python.md)", whole: true,
			src:  "from tests.ci.ci_register import register_cpu_ci\nregister_cpu_ci(est_time=1, suite=\"stage-b-cpu\")\nf() = 1\n",
			want: "::error file=tests/e2e/test_x.py,line=3::tests/e2e/test_x.py: not valid Python: cannot assign to function call here. Maybe you meant '==' instead of '='? (line 3); fix the syntax so that python -c 'import ast; ast.parse(open(FILE).read())' accepts the file\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			dir := filepath.Join(repo, "tests", "e2e")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "test_x.py"), []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			// As the pages run it: from the checkout, --repo .
			t.Chdir(repo)
			code, _, stderr := runArgs([]string{"plan", "--repo", ".", "--hw", "cpu", "--suite", "stage-b-cpu"})
			if code != 1 || !strings.HasPrefix(stderr, tt.want) || (tt.whole && stderr != tt.want) {
				t.Fatalf("wanted exit 1 and %q, got %d and %q", tt.want, code, stderr)
			}
		})
	}
}

// TestRunWithPR: run and file-run take --pr like the other step commands
// (issue 10): the PR's labels decide cadence and labels, its number and head
// name the commit, its body the refs and image, and a fork PR gets no
// secrets. Flags given on the command line still win.
func TestRunWithPR(t *testing.T) {
	s := githubtest.Start(apiFixtures())
	defer s.Close()
	vars := map[string]string{"GITHUB_API_URL": s.URL}
	type spec struct {
		Cadence         string                         `json:"cadence"`
		SecretsWithheld string                         `json:"secrets_withheld"`
		RunEnv          []struct{ Name, Value string } `json:"run_env"`
		Steps           []struct{ Argv []string }      `json:"steps"`
	}
	tests := []struct {
		name                string
		args                []string
		wantCommit, wantCmd string
		wantFork            bool
	}{
		{"labels from the PR", []string{"run", "--stage", "stage-c-4-gpu-h200", "--shard", "1", "--pr", "2874"},
			"5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d_2874", "--cadence regular --labels run-ci-megatron", false},
		{"flags win", []string{"run", "--stage", "stage-c-4-gpu-h200", "--shard", "1", "--pr", "2874", "--labels", "run-ci-sglang", "--pr-number", "7"},
			"5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d_7", "--cadence regular --labels run-ci-sglang", false},
		{"fork", []string{"run", "--stage", "stage-c-4-gpu-h200", "--shard", "1", "--pr", "2901"},
			"8e2c4a6f0b1d3e5a7c9f1b3d5e7a9c0b2d4f6a81_2901", "--cadence regular --labels", true},
		{"file-run", []string{"file-run", "--file", "tests/e2e/megatron/test_glm4_9b.py", "--pr", "2901"},
			"8e2c4a6f0b1d3e5a7c9f1b3d5e7a9c0b2d4f6a81_2901", "tests/e2e/megatron/test_glm4_9b.py", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runWithEnv(append(tt.args, "--repo", milesRepo(), "--dry-run", "--json"), vars)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var sp spec
			if err := json.Unmarshal([]byte(stdout), &sp); err != nil {
				t.Fatal(err)
			}
			commit := ""
			for _, e := range sp.RunEnv {
				if e.Name == "GITHUB_COMMIT_NAME" {
					commit = e.Value
				}
			}
			if commit != tt.wantCommit {
				t.Errorf("GITHUB_COMMIT_NAME: wanted %q, got %q", tt.wantCommit, commit)
			}
			if cmd := strings.Join(sp.Steps[len(sp.Steps)-1].Argv, " "); !strings.HasSuffix(cmd, tt.wantCmd) {
				t.Errorf("wanted the command to end in %q, got %q", tt.wantCmd, cmd)
			}
			if fork := sp.SecretsWithheld != ""; fork != tt.wantFork {
				t.Errorf("wanted secrets withheld: %t, got %q", tt.wantFork, sp.SecretsWithheld)
			}
		})
	}
	code, _, stderr := runWithEnv([]string{"run", "--repo", milesRepo(), "--stage", "stage-b-cpu", "--pr", "2874", "--event", "schedule", "--dry-run"}, vars)
	if want := "miles-ci run: --event conflicts with --pr: the pull request is the trigger (event pull_request with its labels); give one or the other\n"; code != 2 || !strings.HasPrefix(stderr, want) {
		t.Errorf("wanted exit 2 and %q, got %d and %q", want, code, stderr)
	}
}

// TestPRChecksTheCheckout: --pr N plans, runs or triages the checkout's own
// tests with the PR's facts, so a checkout of another commit (a checkout of
// main, issue 40) is an error naming both commits and the git commands that
// fix it; the PR's head or GitHub's merge of it passes; --allow-other-head
// takes the checkout as it is, with a warning.
func TestPRChecksTheCheckout(t *testing.T) {
	s := githubtest.Start(apiFixtures())
	defer s.Close()
	vars := map[string]string{"GITHUB_API_URL": s.URL}
	checkout := func(sha string) string {
		repo := filepath.Join(t.TempDir(), "miles")
		testfiles.CopyTree(t, milesRepo(), repo)
		testfiles.Write(t, repo, ".git/HEAD", "ref: refs/heads/main\n")
		testfiles.Write(t, repo, ".git/refs/heads/main", sha+"\n")
		return repo
	}
	const head, merge, main = "5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d", "9c1e5b7a3d2f4e6a8b0c1d3e5f7a9b2c4d6e8f01", "4b2d6f8a0c1e3a5c7e9b1d3f5a7c9e1b3d5f7a90"
	onMain := checkout(main)
	for _, args := range [][]string{
		{"ci", "--pr", "2874", "--repo", onMain, "--gpus", "none", "--dry-run"},
		{"plan", "--pr", "2874", "--repo", onMain, "--hw", "cuda", "--suite", "stage-c-4-gpu-h200", "--auto-partition-id", "0", "--auto-partition-size", "3"},
		{"policy", "--pr", "2874", "--repo", onMain},
		{"run", "--pr", "2874", "--repo", onMain, "--stage", "stage-c-8-gpu-h100", "--shard", "1", "--gpus", "none", "--dry-run"},
	} {
		code, stdout, stderr := runWithEnv(args, vars)
		want := "::error::--pr 2874: " + onMain + " is at 4b2d6f8a0c1e, not radixark/miles#2874's head 5f1d0c7e2b9a nor its merge into main 9c1e5b7a3d2f, " +
			"so its tests are not the pull request's; check the pull request out (git fetch origin pull/2874/head && git checkout FETCH_HEAD), or give --allow-other-head to take this checkout as it is\n"
		if code != 1 || stdout != "" || !strings.HasSuffix(stderr, want) {
			t.Errorf("%s on a checkout of main: wanted exit 1 and\n%s\ngot %d\n%s%s", args[0], want, code, stdout, stderr)
		}
		code, _, stderr = runWithEnv(append(args, "--allow-other-head"), vars)
		if code != 0 || !strings.Contains(stderr, "::warning::--pr 2874: "+onMain+" is at 4b2d6f8a0c1e, not radixark/miles#2874's head") {
			t.Errorf("%s --allow-other-head: wanted exit 0 and a warning, got %d\n%s", args[0], code, stderr)
		}
	}
	for _, sha := range []string{head, merge} {
		code, _, stderr := runWithEnv([]string{"policy", "--pr", "2874", "--repo", checkout(sha)}, vars)
		if want := "::notice::trigger facts of pull request radixark/miles#2874 at 5f1d0c7e2b9a (open, from the api)\n"; code != 0 || stderr != want {
			t.Errorf("a checkout at %s is the PR's: wanted exit 0 and only %q, got %d %q", sha, want, code, stderr)
		}
	}
	code, _, stderr := runWithEnv([]string{"policy", "--repo", onMain, "--event", "pull_request", "--pr-labels-json", "[]", "--allow-other-head"}, vars)
	if code != 2 || !strings.Contains(stderr, "--allow-other-head goes with --pr") {
		t.Errorf("--allow-other-head without --pr: wanted a usage error, got %d\n%s", code, stderr)
	}
}
