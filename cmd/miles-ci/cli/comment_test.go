package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/radixark/miles-ci/comment"
	"github.com/radixark/miles-ci/comment/commenttest"
	"github.com/radixark/miles-ci/github/githubtest"
)

// commentRun runs `miles-ci comment` with env, in dir (the scenario's files
// there), against srv; it returns what the run did and its stderr.
func commentRun(t *testing.T, dir string, srv *githubtest.Scripted, env map[string]string, args ...string) (commenttest.Result, string) {
	t.Helper()
	vars := map[string]string{"GITHUB_API_URL": srv.URL}
	for k, v := range env {
		vars[k] = v
	}
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := Run(append([]string{"comment"}, args...), Env{Stdout: &stdout, Stderr: &stderr,
		Getenv:    func(k string) string { return vars[k] },
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	return commenttest.Result{Calls: requests(srv), Stdout: stdout.String(), Exit: code, Output: readOutput(dir),
		Crash: strings.Contains(stderr.String(), "Python traceback")}, stderr.String()
}

// TestCommentScenariosOverHTTP plays the recorded scenarios of the newest
// form (a checkout without the script takes it) through the command, its
// files and the API over HTTP (go-github), as the workflow runs it.
func TestCommentScenariosOverHTTP(t *testing.T) {
	scenarios, err := commenttest.Load(filepath.Join("..", "..", "..", "comment", "testdata", "scenarios.json"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir() // no comment_ci_command.py: the newest form
	srv := githubtest.StartScripted(nil)
	defer srv.Close()
	played := 0
	for _, s := range scenarios {
		want := s.WantIn(comment.Forms[0].Name)
		if want == nil {
			continue
		}
		dir := t.TempDir()
		place(t, dir, s)
		srv.Reset(commenttest.Expand(s.Routes, srv.URL))
		got, _ := commentRun(t, dir, srv, s.Env, "--repo", repo)
		played++
		if d := want.Diff(got); d != "" {
			t.Errorf("%s:\n%s", s.Name, d)
		}
	}
	if played < 150 {
		t.Errorf("wanted at least 150 scenarios, played %d", played)
	}
}

// labelScenario is /run-ci-short by a writer on an open PR, whose label
// request GitHub answers with answer.
func labelScenario(answer githubtest.Reply) commenttest.Scenario {
	s := commenttest.Scenario{Env: map[string]string{comment.EnvEventPath: commenttest.EventFile, comment.EnvPolicyPath: commenttest.PolicyFile,
		comment.EnvOutput: commenttest.OutputFile},
		Event: `{"action":"created","issue":{"number":7,"pull_request":{}},"comment":{"id":3,"body":"/run-ci-short","user":{"login":"maint","id":11,"type":"User"}},"sender":{"id":11},"repository":{"id":1072725553,"full_name":"radixark/miles"}}`,
		Policy: `{"version":2,"groups":{"add_label_access":{"repository_permissions":["write"],"user_ids":[]},"repo_write_access":{"repository_permissions":["write"]}},` +
			`"commands":{"add_label":{"group":"add_label_access","allowed_labels":["run-ci-short"]},"clear_labels":{"group":"repo_write_access"},"rerun_failed_ci":{"group":"repo_write_access"},"run_test_file":{"group":"repo_write_access"}}}`}
	s.Routes = []githubtest.Route{
		{Method: "GET", Path: "/repos/radixark/miles/pulls/7", Replies: []githubtest.Reply{{Status: 200, Body: `{"number":7,"state":"open","labels":[],"body":null,` +
			`"head":{"sha":"3f4c9a1e7b2d5c8f0a6e4d2b1c9f8e7d6a5b4c3d","ref":"f","repo":{"id":1072725553,"owner":{"login":"radixark"}}},"base":{"repo":{"id":1072725553,"full_name":"radixark/miles"}}}`}}},
		{Method: "GET", Path: "/repos/radixark/miles/collaborators/maint/permission", Replies: []githubtest.Reply{{Status: 200, Body: `{"permission":"write","user":{"id":11}}`}}},
		{Method: "POST", Path: "/repos/radixark/miles/issues/7/labels", Replies: []githubtest.Reply{answer}},
	}
	return s
}

// TestCommentTokenNeverShown gives the token only in the environment, as
// the workflow does, and runs the command where it fails (GitHub refuses
// the token, the label is not confirmed, the policy is missing) and where
// it succeeds, plain, --dry-run, --json and --body: the token goes to GitHub
// in the Authorization header and nowhere else (stdout, stderr,
// GITHUB_OUTPUT), and the command takes no token argument.
func TestCommentTokenNeverShown(t *testing.T) {
	const token = "ghs_TOKENshouldNEVERbeSHOWN0123456789"
	srv := githubtest.StartScripted(nil)
	defer srv.Close()
	repo := t.TempDir()
	for _, tc := range []struct {
		name   string
		answer githubtest.Reply
		env    map[string]string
		args   []string
		exit   int
	}{
		{"GitHub refuses the token", githubtest.Reply{Status: 401, Body: `{"message":"Bad credentials"}`}, nil, nil, 1},
		{"the label is not confirmed", githubtest.Reply{Status: 200, Body: `[]`}, nil, nil, 1},
		{"no policy", githubtest.Reply{Status: 200}, map[string]string{comment.EnvPolicyPath: "missing.json"}, nil, 1},
		{"the label is added", githubtest.Reply{Status: 200, Body: `[{"name":"run-ci-short"}]`}, nil, nil, 0},
		{"a dry run", githubtest.Reply{Status: 200}, nil, []string{"--dry-run"}, 0},
		{"JSON", githubtest.Reply{Status: 200, Body: `[{"name":"run-ci-short"}]`}, nil, []string{"--json"}, 0},
		{"a tried comment", githubtest.Reply{Status: 200}, nil, []string{"--body", "/run-ci-short", "--pr", "7", "--actor", "maint"}, 0},
		{"GitHub refuses a tried comment's token", githubtest.Reply{Status: 200}, map[string]string{"CI_COMMAND_API_TOKEN": token}, []string{"--body", "/run-ci-short", "--pr", "8", "--actor", "maint"}, 1},
	} {
		s := labelScenario(tc.answer)
		dir := t.TempDir()
		place(t, dir, s)
		os.WriteFile(filepath.Join(dir, commenttest.OutputFile), nil, 0o644)
		srv.Reset(s.Routes)
		env := map[string]string{comment.EnvToken: token}
		for k, v := range s.Env {
			env[k] = v
		}
		for k, v := range tc.env {
			env[k] = v
		}
		got, stderr := commentRun(t, dir, srv, env, append([]string{"--repo", repo}, tc.args...)...)
		if got.Exit != tc.exit {
			t.Errorf("%s: wanted exit %d, got %d (%q, %q)", tc.name, tc.exit, got.Exit, got.Stdout, stderr)
		}
		for what, text := range map[string]string{"stdout": got.Stdout, "stderr": stderr, "GITHUB_OUTPUT": got.Output, "the calls": strings.Join(got.Calls, "\n")} {
			if strings.Contains(text, token) || strings.Contains(text, token[8:20]) {
				t.Errorf("%s: the token shows in %s: %q", tc.name, what, text)
			}
		}
		if auth := srv.Authorizations(); len(auth) > 0 && auth[0] != "Bearer "+token || len(auth) == 0 && len(got.Calls) > 0 {
			t.Errorf("%s: wanted the token in the Authorization header, got %q", tc.name, srv.Authorizations())
		}
	}
	var out bytes.Buffer
	if code := Run([]string{"comment", "--token", token}, Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}); code != 2 || strings.Contains(out.String(), token) {
		t.Errorf("wanted --token refused as an unknown flag (exit 2) without echoing it, got %d: %q", code, out.String())
	}
}

// TestCommentDryRunSendsNoChange: --dry-run sends the GETs and no change,
// prints each call, and writes no GITHUB_OUTPUT.
func TestCommentDryRunSendsNoChange(t *testing.T) {
	srv := githubtest.StartScripted(nil)
	defer srv.Close()
	s := labelScenario(githubtest.Reply{Status: 500})
	dir := t.TempDir()
	place(t, dir, s)
	srv.Reset(s.Routes)
	env := map[string]string{comment.EnvToken: "t"}
	for k, v := range s.Env {
		env[k] = v
	}
	got, _ := commentRun(t, dir, srv, env, "--repo", t.TempDir(), "--dry-run")
	for _, c := range got.Calls {
		if !strings.HasPrefix(c, "GET ") {
			t.Errorf("a dry run sent %s", c)
		}
	}
	for _, want := range []string{"GET /repos/radixark/miles/pulls/7 -> 200", `would POST /repos/radixark/miles/issues/7/labels {"labels":["run-ci-short"]} (not sent)`,
		`prints: {"actor_id":11,"decision":"ALLOW_ADDED","label":"run-ci-short","pull_number":7}  exit 0`} {
		if !strings.Contains(got.Stdout, want) {
			t.Errorf("wanted %q in the dry run's report, got\n%s", want, got.Stdout)
		}
	}
	if got.Exit != 0 || got.Output != "" {
		t.Errorf("wanted exit 0 and no GITHUB_OUTPUT, got %d and %q", got.Exit, got.Output)
	}
}

// TestCommentAsk tries a comment: the event is built from the PR and the
// actor's permission, and the workflow's steps run in order, sending no change.
func TestCommentAsk(t *testing.T) {
	srv := githubtest.StartScripted(nil)
	defer srv.Close()
	s := labelScenario(githubtest.Reply{Status: 500})
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, filepath.Dir(comment.PolicyFile)), 0o755)
	os.WriteFile(filepath.Join(repo, comment.PolicyFile), []byte(s.Policy), 0o644)
	srv.Reset(s.Routes)
	got, stderr := commentRun(t, t.TempDir(), srv, nil, "--repo", repo, "--body", "/run-ci-short", "--pr", "7", "--actor", "maint")
	for _, c := range got.Calls {
		if !strings.HasPrefix(c, "GET ") {
			t.Errorf("a tried comment sent %s", c)
		}
	}
	for _, want := range []string{"preflight (handle-command: Validate and authorize the command):", "GITHUB_OUTPUT (not written): capability=issues success_reaction=none",
		"command (handle-command: Authorize and run the issues command):", `"decision":"ALLOW_ADDED"`} {
		if !strings.Contains(got.Stdout, want) {
			t.Errorf("wanted %q in the answer, got\n%s%s", want, got.Stdout, stderr)
		}
	}
	if got.Exit != 0 {
		t.Errorf("wanted exit 0, got %d: %s", got.Exit, stderr)
	}
}

// TestCommentOutputFIFOFailsAtOnce: a GITHUB_OUTPUT that is a FIFO nothing
// reads is refused at once, naming it, where the open would wait for ever.
func TestCommentOutputFIFOFailsAtOnce(t *testing.T) {
	dir := t.TempDir()
	s := labelScenario(githubtest.Reply{Status: 200, Body: `[{"name":"run-ci-short"}]`})
	env := place(t, dir, s)
	fifo := filepath.Join(dir, "output.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	env[comment.EnvOutput], env[comment.EnvPreflight], env[comment.EnvToken] = fifo, "true", "t"
	srv := githubtest.StartScripted(nil)
	defer srv.Close()
	srv.Reset(commenttest.Expand(s.Routes, srv.URL))
	done := make(chan commenttest.Result, 1)
	go func() { got, _ := commentRun(t, dir, srv, env, "--repo", t.TempDir()); done <- got }()
	select {
	case got := <-done:
		if got.Exit != 1 || !strings.Contains(got.Stdout, "::error::cannot write GITHUB_OUTPUT: "+fifo+" is a named pipe (FIFO) that nothing reads") {
			t.Errorf("wanted the FIFO named and exit 1, got %d and %q", got.Exit, got.Stdout)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the gateway waits on a FIFO that nothing reads")
	}
}

// TestCommentAskRefusesAnActorThatIsNoLogin: --actor goes into an API
// path, so one that is no GitHub login is a usage error naming it, before
// any call.
func TestCommentAskRefusesAnActorThatIsNoLogin(t *testing.T) {
	srv := githubtest.StartScripted(nil)
	defer srv.Close()
	for _, actor := range []string{"octo\n::error::x", "a/../b", "octo dev", "x_"} {
		got, stderr := commentRun(t, t.TempDir(), srv, nil, "--repo", t.TempDir(), "--body", "/run-ci-short", "--pr", "7", "--actor", actor)
		if got.Exit != 2 || !strings.Contains(stderr, "is not a GitHub login") || len(got.Calls) != 0 {
			t.Errorf("--actor %q: wanted exit 2 naming it and no call, got %d, %q, %v", actor, got.Exit, stderr, got.Calls)
		}
	}
	if got, stderr := commentRun(t, t.TempDir(), srv, nil, "--repo", t.TempDir(), "--body", "/run-ci-short", "--pr", "7", "--actor", "renovate[bot]"); strings.Contains(stderr, "is not a GitHub login") {
		t.Errorf("wanted a bot's login taken, got %d, %q", got.Exit, stderr)
	}
}
