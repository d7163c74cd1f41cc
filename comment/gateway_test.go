package comment_test

import (
	"strings"
	"testing"

	"github.com/radixark/miles-ci/comment"
	"github.com/radixark/miles-ci/comment/commenttest"
	"github.com/radixark/miles-ci/github/githubtest"
	"github.com/radixark/miles-ci/pyjson"
)

// gateway is the gateway of a form, for Miles' repository.
func gateway(t *testing.T, form string) comment.Gateway {
	t.Helper()
	for _, f := range comment.Forms {
		if f.Name == form {
			g := comment.Default()
			g.Form = f
			return g
		}
	}
	t.Fatalf("no form %q", form)
	return comment.Gateway{}
}

// TestScenarios plays the recorded scenarios (testdata/scenarios.json:
// events, policies, environments and GitHub's answers, with what Miles'
// own script did on them in each of its forms) and wants the same calls,
// the same printed line, exit status and GITHUB_OUTPUT in every form.
func TestScenarios(t *testing.T) {
	scenarios, err := commenttest.Load("testdata/scenarios.json")
	if err != nil {
		t.Fatal(err)
	}
	played := map[string]int{}
	for _, s := range scenarios {
		for _, f := range comment.Forms {
			want := s.WantIn(f.Name)
			if want == nil {
				continue
			}
			played[f.Name]++
			if d := want.Diff(commenttest.Play(gateway(t, f.Name), s)); d != "" {
				t.Errorf("%s (form %s):\n%s", s.Name, f.Name, d)
			}
		}
	}
	for _, f := range comment.Forms {
		if played[f.Name] < 150 {
			t.Errorf("form %s: wanted at least 150 recorded scenarios, got %d", f.Name, played[f.Name])
		}
	}
}

// host is a Host of one event and policy whose calls a test answers.
type host struct {
	commenttest.Host
	answer func(comment.Call) comment.Answer
	calls  []comment.Call
}

func (h *host) Call(c comment.Call) comment.Answer {
	h.calls = append(h.calls, c)
	return h.answer(c)
}

func scenario(body string, env map[string]string) commenttest.Scenario {
	e := map[string]string{comment.EnvEventPath: commenttest.EventFile, comment.EnvPolicyPath: commenttest.PolicyFile,
		comment.EnvToken: "t", comment.EnvOutput: commenttest.OutputFile}
	for k, v := range env {
		e[k] = v
	}
	return commenttest.Scenario{Env: e,
		Event: `{"action":"created","issue":{"number":7,"pull_request":{}},"comment":{"id":3,"body":` + pyjson.Quote(body) +
			`,"user":{"login":"maint","id":11,"type":"User"}},"sender":{"id":11},"repository":{"id":1072725553,"full_name":"radixark/miles"}}`,
		Policy: `{"version":2,"groups":{"add_label_access":{"repository_permissions":["write"],"user_ids":[]},"repo_write_access":{"repository_permissions":["write"]}},
"commands":{"add_label":{"group":"add_label_access","allowed_labels":["run-ci-short"]},"clear_labels":{"group":"repo_write_access"},
"rerun_failed_ci":{"group":"repo_write_access"},"run_test_file":{"group":"repo_write_access"}}}`}
}

// github answers as GitHub would for pull request 7 (same repository, the
// label nightly) and a writer, and leaves every change unsent (a dry run).
func dryGitHub(c comment.Call) comment.Answer {
	switch {
	case c.Changes():
		return comment.Answer{NotSent: true}
	case strings.HasSuffix(c.Path, "/pulls/7"):
		return comment.Answer{Status: 200, Body: []byte(`{"number":7,"state":"open","labels":[{"name":"nightly"}],"body":"ci-image-tag: t1",
"head":{"sha":"3f4c9a1e7b2d5c8f0a6e4d2b1c9f8e7d6a5b4c3d","ref":"f","repo":{"id":1072725553,"owner":{"login":"radixark"}}},"base":{"repo":{"id":1072725553,"full_name":"radixark/miles"}}}`)}
	case strings.HasSuffix(c.Path, "/permission"):
		return comment.Answer{Status: 200, Body: []byte(`{"permission":"write","user":{"id":11}}`)}
	}
	return comment.Answer{Status: 404}
}

// TestDryRun takes a change a dry run did not send as confirmed where the
// confirmation holds nothing only GitHub knows, and stops at a dispatch
// whose answer names the run.
func TestDryRun(t *testing.T) {
	for _, tc := range []struct {
		form, body, decision, pending string
		changes                       []string
	}{
		{"run-details", "/run-ci-short", "ALLOW_ADDED", "", []string{`POST /repos/radixark/miles/issues/7/labels {"labels":["run-ci-short"]}`}},
		{"run-details", "/clear-labels", "ALLOW_CLEARED", "", []string{`DELETE /repos/radixark/miles/issues/7/labels/nightly`}},
		{"run-details", "/rerun-test tests/e2e/test_a.py", "", "names the run it starts",
			[]string{`POST /repos/radixark/miles/actions/workflows/run-ci-file.yml/dispatches {"ref":"main","inputs":{"pull_number":"7","head_sha":"3f4c9a1e7b2d5c8f0a6e4d2b1c9f8e7d6a5b4c3d","test_file":"tests/e2e/test_a.py","ci_image_tag":"t1"},"return_run_details":true}`}},
		{"rerun-test", "/rerun-test tests/e2e/test_a.py", "ALLOW_FILE_RUN_DISPATCHED", "",
			[]string{`POST /repos/radixark/miles/actions/workflows/run-ci-file.yml/dispatches {"ref":"main","inputs":{"pull_number":"7","head_sha":"3f4c9a1e7b2d5c8f0a6e4d2b1c9f8e7d6a5b4c3d","test_file":"tests/e2e/test_a.py","ci_image_tag":"t1"}}`}},
	} {
		h := &host{Host: *commenttest.NewHost(scenario(tc.body, nil)), answer: dryGitHub}
		o := gateway(t, tc.form).Run(h)
		var changes []string
		for _, c := range o.Calls {
			if c.Changes() {
				changes = append(changes, c.String())
				if c.Sent {
					t.Errorf("%s: %s was sent in a dry run", tc.body, c)
				}
			}
		}
		if strings.Join(changes, "\n") != strings.Join(tc.changes, "\n") {
			t.Errorf("%s (%s): wanted the changes %q, got %q", tc.body, tc.form, tc.changes, changes)
		}
		if o.Decision != tc.decision || !strings.Contains(o.Pending, tc.pending) || (tc.pending != "") != (o.Pending != "") {
			t.Errorf("%s (%s): wanted decision %q and pending %q, got %q and %q (%q)", tc.body, tc.form, tc.decision, tc.pending, o.Decision, o.Pending, o.Stdout)
		}
	}
}

// TestDetectDeclinesAnUnknownForm: a script whose declarations match no
// form is one miles-ci does not know, named by what differs.
func TestDetectDeclinesAnUnknownForm(t *testing.T) {
	src := "REPOSITORY = \"radixark/miles\"\nREPOSITORY_ID = 1072725553\nCOMMAND_MARKERS = (\"/run-ci\", \"/retry\")\n"
	_, err := comment.Detect([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "COMMAND_MARKERS") || !strings.Contains(err.Error(), "does not know") {
		t.Errorf("wanted a refusal naming COMMAND_MARKERS, got %v", err)
	}
	if _, err := comment.Detect([]byte("x = (")); err == nil {
		t.Error("wanted a refusal of a script Python would not parse")
	}
	if _, err := comment.Detect([]byte("COMMAND_MARKERS = ()\n")); err == nil || !strings.Contains(err.Error(), "REPOSITORY") {
		t.Errorf("wanted a refusal naming REPOSITORY, got %v", err)
	}
}

// TestScenariosFileIsReadable keeps the fixture format readable by the
// stand-in: every route's replies have a status.
func TestScenariosFileIsReadable(t *testing.T) {
	scenarios, err := commenttest.Load("testdata/scenarios.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		for _, r := range s.Routes {
			for _, rep := range r.Replies {
				if rep.Status == 0 {
					t.Errorf("%s: %s %s has a reply without a status", s.Name, r.Method, r.Path)
				}
			}
		}
	}
	_ = githubtest.Reply{}
}

// TestRefusalIsOneLine: a refusal that quotes the event (a duplicate key
// holding a line break, an escape, the runner's old command form) is one
// ::error:: line, so the event cannot forge a workflow command of its own.
func TestRefusalIsOneLine(t *testing.T) {
	s := scenario("/run-ci-short", nil)
	s.Event = `{"action":"created","k\n::add-mask::x\u001b[2J##[error]":1,"k\n::add-mask::x\u001b[2J##[error]":2}`
	o := gateway(t, "run-details").Run(&host{Host: *commenttest.NewHost(s), answer: dryGitHub})
	want := "::error::duplicate JSON key: k\\n::add-mask::x\\x1b[2J##\\[error]\n"
	if o.Stdout != want || o.Exit != 1 {
		t.Errorf("wanted %q and exit 1, got %q and %d", want, o.Stdout, o.Exit)
	}
}
