package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/comment"
	"github.com/radixark/miles-ci/comment/commenttest"
	"github.com/radixark/miles-ci/github/githubtest"
)

// scriptServer runs a checkout's comment_ci_command.py once per request
// line, in one Python process (a process per scenario takes seconds on a
// loaded machine): it loads the script as a module, points its API_ROOT at
// the stand-in, and for each line (a folder and an environment, JSON) runs
// main() in that folder with that environment, as `python3 SCRIPT` would,
// and answers its stdout, exit status and whether it ended in a traceback.
// The loop is at the top level, so main() runs as deep in the stack as
// under `python3 SCRIPT` (RecursionError comes at the same depth).
const scriptServer = `
import importlib.util, io, json, os, sys, traceback
spec = importlib.util.spec_from_file_location("comment_ci_command", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
m.API_ROOT = sys.argv[2]
base = dict(os.environ)
answer = sys.stdout
for line in sys.stdin:
    job = json.loads(line)
    os.chdir(job["dir"])
    os.environ.clear()
    os.environ.update(base)
    os.environ.update(job["env"])
    sys.stdout = io.StringIO()
    crash = False
    try:
        rc = m.main()
    except BaseException:
        crash, rc = True, 1
    out = sys.stdout.getvalue()
    sys.stdout = answer
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:
        crash, rc, out = True, 1, ""
    if crash:
        out = ""
    answer.write(json.dumps({"stdout": out, "exit": rc, "crash": crash}) + "\n")
    answer.flush()
`

// TestCommentMatchesMilesScript runs every generated scenario through the
// Miles checkouts' own gateway script and through `miles-ci comment`
// against the same recorded answers, and compares the API calls (method,
// path, query, body), stdout, the exit status and GITHUB_OUTPUT. It needs
// MILES_CI_REAL_MILES: Miles checkouts (a list, like PATH), each with its
// .github/workflows/scripts/comment_ci_command.py. With
// MILES_CI_COMMENT_FIXTURES=FILE it also writes the scenarios of each
// distinct outcome, with the script's results in each form, to FILE (the
// committed comment/testdata/scenarios.json is written so).
func TestCommentMatchesMilesScript(t *testing.T) {
	roots := os.Getenv("MILES_CI_REAL_MILES")
	if roots == "" {
		t.Skip("set MILES_CI_REAL_MILES to Miles checkouts to compare with their comment gateway script")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	scenarios := commenttest.Generate()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	srv := githubtest.StartScripted(nil)
	defer srv.Close()
	// results are the script's, by scenario and form; picked the scenarios
	// of each form's distinct outcomes (kept), for the fixtures.
	results := make([]map[string]*commenttest.Result, len(scenarios))
	picked, kept := map[int]bool{}, map[string]bool{}
	for _, root := range filepath.SplitList(roots) {
		root, _ = filepath.Abs(root)
		script := filepath.Join(root, comment.ScriptFile)
		src, err := os.ReadFile(script)
		if err != nil {
			t.Errorf("MILES_CI_REAL_MILES=%s holds no %s", root, comment.ScriptFile)
			continue
		}
		gw, err := comment.Detect(src)
		if err != nil {
			t.Errorf("%s: %v", root, err)
			continue
		}
		py, err := startScript(ctx, python, script, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		differ, compared := 0, 0
		only := os.Getenv("MILES_CI_COMMENT_ONLY")
		for i, s := range scenarios {
			if only != "" && !strings.Contains(s.Name, only) {
				continue
			}
			if testing.Verbose() {
				fmt.Fprintln(os.Stderr, "scenario:", s.Name)
			}
			dir := t.TempDir()
			compared++
			want := py.play(t, dir, srv, s)
			got := playMilesCI(t, root, dir, srv, s)
			if d := want.Diff(got); d != "" {
				differ++
				if differ <= 15 {
					t.Errorf("%s (%s form): %s\n%s", s.Name, gw.Name, root, d)
				}
			}
			key := want.Stdout + fmt.Sprint(want.Exit, want.Crash, len(want.Calls), want.Output != "")
			if !kept[gw.Name+key] {
				kept[gw.Name+key] = true
				picked[i] = true
			}
			if results[i] == nil {
				results[i] = map[string]*commenttest.Result{}
			}
			results[i][gw.Name] = &want
		}
		py.close()
		t.Logf("%s (%s form): %d scenarios compared, %d differ", root, gw.Name, compared, differ)
	}
	if out := os.Getenv("MILES_CI_COMMENT_FIXTURES"); out != "" {
		var fixtures []commenttest.Scenario
		for i, s := range scenarios {
			if !picked[i] {
				continue
			}
			s.Want = map[string]*commenttest.Result{}
			byResult := map[string][]string{}
			for form, r := range results[i] {
				data, _ := json.Marshal(r)
				byResult[string(data)] = append(byResult[string(data)], form)
			}
			for data, forms := range byResult {
				sort.Strings(forms)
				var r commenttest.Result
				json.Unmarshal([]byte(data), &r)
				s.Want[strings.Join(forms, ",")] = &r
			}
			fixtures = append(fixtures, commenttest.Trim(s))
		}
		if err := commenttest.Save(out, fixtures); err != nil {
			t.Fatal(err)
		}
	}
}

// place writes the scenario's files into dir and returns its environment.
func place(t *testing.T, dir string, s commenttest.Scenario) map[string]string {
	for name, text := range map[string]string{commenttest.EventFile: s.Event, commenttest.PolicyFile: s.Policy} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(dir, commenttest.OutputFile))
	return s.Env
}

func requests(srv *githubtest.Scripted) []string {
	out := []string{}
	for _, r := range srv.Requests() {
		c := comment.Call{Method: r.Method, Path: r.Path, Body: r.Body}
		out = append(out, c.String())
	}
	return out
}

func readOutput(dir string) string {
	data, _ := os.ReadFile(filepath.Join(dir, commenttest.OutputFile))
	return string(data)
}

// script is a running scriptServer.
type script struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startScript(ctx context.Context, python, path, root string) (*script, error) {
	cmd := exec.CommandContext(ctx, python, "-c", scriptServer, path, root)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"}
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &script{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

func (p *script) close() {
	p.in.Close()
	p.cmd.Wait()
}

func (p *script) play(t *testing.T, dir string, srv *githubtest.Scripted, s commenttest.Scenario) commenttest.Result {
	env := place(t, dir, s)
	srv.Reset(commenttest.Expand(s.Routes, srv.URL))
	job, _ := json.Marshal(map[string]any{"dir": dir, "env": env})
	if _, err := p.in.Write(append(job, '\n')); err != nil {
		t.Fatal(err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("the script's harness stopped: %v", err)
	}
	var ans struct {
		Stdout string
		Exit   int
		Crash  bool
	}
	if err := json.Unmarshal(line, &ans); err != nil {
		t.Fatal(err)
	}
	return commenttest.Result{Calls: requests(srv), Stdout: ans.Stdout, Exit: ans.Exit, Output: readOutput(dir), Crash: ans.Crash}
}

func playMilesCI(t *testing.T, root, dir string, srv *githubtest.Scripted, s commenttest.Scenario) commenttest.Result {
	env := place(t, dir, s)
	srv.Reset(commenttest.Expand(s.Routes, srv.URL))
	vars := map[string]string{"GITHUB_API_URL": srv.URL}
	for k, v := range env {
		vars[k] = v
	}
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := Run([]string{"comment", "--repo", root}, Env{Stdout: &stdout, Stderr: &stderr,
		Getenv:    func(k string) string { return vars[k] },
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	return commenttest.Result{Calls: requests(srv), Stdout: stdout.String(), Exit: code, Output: readOutput(dir),
		Crash: strings.Contains(stderr.String(), "Python traceback")}
}
