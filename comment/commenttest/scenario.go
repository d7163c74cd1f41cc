// Package commenttest holds the comment gateway's scenarios (an event, a
// policy, the environment and GitHub's answers, with what Miles' script
// does on them) and an in-memory Host that plays them, for tests.
package commenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/radixark/miles-ci/comment"
	"github.com/radixark/miles-ci/github/githubtest"
)

// The files a scenario's environment names, relative to the folder the
// script runs in: the event, the policy and GITHUB_OUTPUT.
const (
	EventFile  = "event.json"
	PolicyFile = "policy.json"
	OutputFile = "github-output"
	// APIRoot in a reply body stands for the API root the client uses.
	APIRoot = "{API_ROOT}"
)

// Scenario is one run of the gateway script.
type Scenario struct {
	Name string
	// Env is the script's environment; its files are EventFile, PolicyFile
	// and OutputFile in the folder it runs in.
	Env map[string]string
	// Event and Policy are the files' text.
	Event, Policy string
	Routes        []githubtest.Route
	// Want is what Miles' script did, by the forms it did it in (their
	// names joined by ","): forms that agree share one result.
	Want map[string]*Result
}

// scenarioJSON is a Scenario as a file holds it: the event and the policy
// as JSON where that keeps their bytes (githubtest.AsJSON), as text, or
// base64 where they are not UTF-8.
type scenarioJSON struct {
	Name        string             `json:"name"`
	Env         map[string]string  `json:"env"`
	Event       string             `json:"event,omitempty"`
	EventJSON   json.RawMessage    `json:"event_json,omitempty"`
	EventBytes  []byte             `json:"event_base64,omitempty"`
	Policy      string             `json:"policy,omitempty"`
	PolicyJSON  json.RawMessage    `json:"policy_json,omitempty"`
	PolicyBytes []byte             `json:"policy_base64,omitempty"`
	Routes      []githubtest.Route `json:"routes"`
	Want        map[string]*Result `json:"want,omitempty"`
}

// MarshalJSON writes the scenario as a file holds it.
func (s Scenario) MarshalJSON() ([]byte, error) {
	out := scenarioJSON{Name: s.Name, Env: s.Env, Event: s.Event, Policy: s.Policy, Routes: s.Routes, Want: s.Want}
	switch {
	case githubtest.AsJSON(s.Event):
		out.EventJSON, out.Event = json.RawMessage(s.Event), ""
	case !utf8.ValidString(s.Event):
		out.EventBytes, out.Event = []byte(s.Event), ""
	}
	switch {
	case githubtest.AsJSON(s.Policy):
		out.PolicyJSON, out.Policy = json.RawMessage(s.Policy), ""
	case !utf8.ValidString(s.Policy):
		out.PolicyBytes, out.Policy = []byte(s.Policy), ""
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a scenario as MarshalJSON writes it.
func (s *Scenario) UnmarshalJSON(data []byte) error {
	var in scenarioJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*s = Scenario{Name: in.Name, Env: in.Env, Event: in.Event, Policy: in.Policy, Routes: in.Routes, Want: in.Want}
	if in.EventJSON != nil {
		s.Event = string(in.EventJSON)
	}
	if in.EventBytes != nil {
		s.Event = string(in.EventBytes)
	}
	if in.PolicyJSON != nil {
		s.Policy = string(in.PolicyJSON)
	}
	if in.PolicyBytes != nil {
		s.Policy = string(in.PolicyBytes)
	}
	return nil
}

// WantIn is what the script did in the form ("" when the scenario says
// nothing of it).
func (s Scenario) WantIn(form string) *Result {
	for forms, r := range s.Want {
		for _, f := range strings.Split(forms, ",") {
			if f == form {
				return r
			}
		}
	}
	return nil
}

// Result is what one run did, as compared.
type Result struct {
	Calls  []string `json:"calls"`
	Stdout string   `json:"stdout"`
	Exit   int      `json:"exit"`
	Output string   `json:"output"`
	// Crash: Python stopped with a traceback (stdout empty, exit 1).
	Crash bool `json:"crash,omitempty"`
}

// Diff says how two results differ ("" when they are the same).
func (r Result) Diff(got Result) string {
	var d []string
	if strings.Join(r.Calls, "\n") != strings.Join(got.Calls, "\n") {
		d = append(d, fmt.Sprintf("calls:\n  wanted %q\n  got    %q", r.Calls, got.Calls))
	}
	if r.Stdout != got.Stdout {
		d = append(d, fmt.Sprintf("stdout: wanted %q, got %q", r.Stdout, got.Stdout))
	}
	if r.Exit != got.Exit {
		d = append(d, fmt.Sprintf("exit: wanted %d, got %d", r.Exit, got.Exit))
	}
	if r.Output != got.Output {
		d = append(d, fmt.Sprintf("GITHUB_OUTPUT: wanted %q, got %q", r.Output, got.Output))
	}
	if r.Crash != got.Crash {
		d = append(d, fmt.Sprintf("crash: wanted %v, got %v", r.Crash, got.Crash))
	}
	return strings.Join(d, "\n")
}

// Expand is routes with APIRoot in their bodies replaced by root.
func Expand(routes []githubtest.Route, root string) []githubtest.Route {
	out := make([]githubtest.Route, len(routes))
	for i, r := range routes {
		out[i] = r
		out[i].Replies = make([]githubtest.Reply, len(r.Replies))
		for j, rep := range r.Replies {
			rep.Body = strings.ReplaceAll(rep.Body, APIRoot, root)
			out[i].Replies[j] = rep
		}
	}
	return out
}

// Load reads a file of scenarios.
func Load(path string) ([]Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Scenario
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Trim is s without the routes no form's calls reached.
func Trim(s Scenario) Scenario {
	used := map[string]bool{}
	for _, w := range s.Want {
		for _, c := range w.Calls {
			method, rest, _ := strings.Cut(c, " ")
			path, _, _ := strings.Cut(rest, " ")
			used[method+" "+path] = true
		}
	}
	var routes []githubtest.Route
	for _, r := range s.Routes {
		if used[r.Method+" "+r.Path] {
			routes = append(routes, r)
		}
	}
	s.Routes = routes
	return s
}

// Save writes scenarios as a JSON array, one scenario a line.
func Save(path string, scenarios []Scenario) error {
	var b strings.Builder
	b.WriteString("[\n")
	for i, s := range scenarios {
		data, err := json.Marshal(s)
		if err != nil {
			return err
		}
		b.Write(data)
		if i < len(scenarios)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Host plays a scenario in memory: its files, its environment and its routes.
type Host struct {
	s      Scenario
	env    map[string]string
	seen   map[int]int
	Output strings.Builder
	Calls  []string
}

// NewHost is a host for s.
func NewHost(s Scenario) *Host {
	h := &Host{s: s, env: map[string]string{}, seen: map[int]int{}}
	for k, v := range s.Env {
		h.env[k] = v
	}
	return h
}

// Root is the in-memory API root.
const Root = "http://standin.invalid"

func (h *Host) Getenv(name string) (string, bool) { v, ok := h.env[name]; return v, ok }
func (h *Host) APIRoot() string                   { return Root }

// ReadFile serves the scenario's files from a folder that holds only them.
func (h *Host) ReadFile(path string) ([]byte, error) {
	switch p := comment.PathString(path); p {
	case EventFile:
		return []byte(h.s.Event), nil
	case PolicyFile:
		return []byte(h.s.Policy), nil
	case ".":
		return nil, fmt.Errorf("[Errno 21] Is a directory: '%s'", p)
	default:
		return nil, fmt.Errorf("[Errno 2] No such file or directory: '%s'", p)
	}
}

// AppendOutput appends to GITHUB_OUTPUT, the one other file of the folder.
func (h *Host) AppendOutput(path, text string) error {
	if p := comment.PathString(path); p != OutputFile {
		return fmt.Errorf("[Errno 2] No such file or directory: '%s'", p)
	}
	h.Output.WriteString(text)
	return nil
}

func (h *Host) Call(c comment.Call) comment.Answer {
	h.Calls = append(h.Calls, c.String())
	for i, r := range Expand(h.s.Routes, Root) {
		if r.Method == c.Method && r.Path == c.Path && len(r.Replies) > 0 {
			n := min(h.seen[i], len(r.Replies)-1)
			h.seen[i]++
			return comment.Answer{Status: r.Replies[n].Status, Body: []byte(r.Replies[n].Body)}
		}
	}
	return comment.Answer{Status: 404, Body: []byte(`{"message":"Not Found"}`)}
}

// Play runs the scenario on the gateway in memory.
func Play(g comment.Gateway, s Scenario) Result {
	h := NewHost(s)
	o := g.Run(h)
	return Result{Calls: nonNil(h.Calls), Stdout: o.Stdout, Exit: o.Exit, Output: h.Output.String(), Crash: o.Crash != ""}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
