package stagerun

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/radixark/miles-ci/internal/lazyre"
)

// GitHubVars are the GitHub Actions default variables a stage container may
// be given from the run that started it, in the order they are set. Miles'
// runner reads the first five: GITHUB_SHA, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT,
// GITHUB_EVENT_NAME and GITHUB_REF are the provenance of its metric-history
// records and key its runtime history (which it writes only for a scheduled
// run of refs/heads/main); the other four name the run (its repository, server,
// workflow and job). Variables miles-ci sets itself (GITHUB_ACTIONS,
// GITHUB_WORKSPACE, GITHUB_COMMIT_NAME, GITHUB_STEP_SUMMARY) and anything
// that may carry a credential (GITHUB_TOKEN) are not on the list.
var GitHubVars = factNames()

// selfSet are the GitHub variables every stage container gets from miles-ci
// itself; a run may not override them.
var selfSet = []string{"GITHUB_ACTIONS", "GITHUB_WORKSPACE", "GITHUB_COMMIT_NAME", "GITHUB_STEP_SUMMARY"}

// MaxGitHubValue bounds one GitHub run fact in bytes (a ref is at most a few
// hundred; a workflow name is free text).
const MaxGitHubValue = 1024

// GitHubRun is the facts of the GitHub Actions run a stage shard belongs to,
// as its default variables name them; "" leaves a variable unset, as a local
// run does. They go into the run-phase environment only (Spec.RunEnv), so a
// new run id never changes a cached layer.
type GitHubRun struct {
	// SHA is GITHUB_SHA, the commit the workflow run is for.
	SHA string `json:"GITHUB_SHA,omitempty"`
	// Ref is GITHUB_REF, e.g. refs/heads/main or refs/pull/42/merge.
	Ref string `json:"GITHUB_REF,omitempty"`
	// EventName is GITHUB_EVENT_NAME, e.g. pull_request or schedule.
	EventName string `json:"GITHUB_EVENT_NAME,omitempty"`
	// RunID is GITHUB_RUN_ID, the workflow run's id.
	RunID string `json:"GITHUB_RUN_ID,omitempty"`
	// RunAttempt is GITHUB_RUN_ATTEMPT, 1 and up for each re-run.
	RunAttempt string `json:"GITHUB_RUN_ATTEMPT,omitempty"`
	// Repository is GITHUB_REPOSITORY, owner/name.
	Repository string `json:"GITHUB_REPOSITORY,omitempty"`
	// ServerURL is GITHUB_SERVER_URL, e.g. https://github.com.
	ServerURL string `json:"GITHUB_SERVER_URL,omitempty"`
	// Workflow is GITHUB_WORKFLOW, the workflow's name.
	Workflow string `json:"GITHUB_WORKFLOW,omitempty"`
	// Job is GITHUB_JOB, the job's id in the workflow.
	Job string `json:"GITHUB_JOB,omitempty"`
}

// field is the GitHubRun field a variable of GitHubVars fills; nil for another name.
func (g *GitHubRun) field(name string) *string {
	if f := factNamed(name); f != nil {
		return f.field(g)
	}
	return nil
}

// Env lists the facts given, as environment variables in GitHubVars order.
func (g GitHubRun) Env() []EnvVar {
	var out []EnvVar
	for _, name := range GitHubVars {
		if v := *g.field(name); v != "" {
			out = append(out, EnvVar{Name: name, Value: v})
		}
	}
	return out
}

// Check checks every fact given; the error names the variable and the fix.
func (g GitHubRun) Check() error {
	for _, e := range g.Env() {
		if err := checkGitHubValue(e.Name, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// NewGitHubRun builds the facts from NAME=VALUE pairs, checking each; from
// says where they come from in errors (e.g. "--github-env"). An empty value
// leaves the variable unset. A name off GitHubVars is an error, and its value
// is never repeated in it (it may be a credential).
func NewGitHubRun(vars []EnvVar, from string) (GitHubRun, error) {
	var g GitHubRun
	seen := map[string]bool{}
	for _, v := range vars {
		f := g.field(v.Name)
		switch {
		case f == nil && slices.Contains(selfSet, v.Name):
			return GitHubRun{}, fmt.Errorf("%s: %s is set by miles-ci itself in every stage container; drop it", from, v.Name)
		case f == nil:
			return GitHubRun{}, fmt.Errorf("%s: %q is not a GitHub run fact a stage container takes; give only %s", from, v.Name, strings.Join(GitHubVars, ", "))
		case seen[v.Name]:
			return GitHubRun{}, fmt.Errorf("%s: %s is given twice; give each variable once", from, v.Name)
		}
		seen[v.Name] = true
		if err := checkGitHubValue(v.Name, v.Value); err != nil {
			return GitHubRun{}, fmt.Errorf("%s: %w", from, err)
		}
		*f = v.Value
	}
	return g, nil
}

// ParseGitHubEnv reads NAME=VALUE entries (the module's --github-env) into
// the facts of a run.
func ParseGitHubEnv(entries []string, from string) (GitHubRun, error) {
	vars := make([]EnvVar, 0, len(entries))
	for _, e := range entries {
		name, value, ok := strings.Cut(e, "=")
		if !ok || name == "" {
			// Without "=" the entry may be a bare value (e.g. a comma split
			// one in two): never repeat it.
			return GitHubRun{}, fmt.Errorf("%s: an entry of %d bytes is not NAME=VALUE; give e.g. GITHUB_RUN_ID=1234567890 (a value holding a comma goes in double quotes, CSV style)", from, len(e))
		}
		vars = append(vars, EnvVar{Name: name, Value: value})
	}
	return NewGitHubRun(vars, from)
}

var (
	gitHubSHA        = lazyre.New(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	gitHubRunID      = lazyre.New(`^[0-9]{1,20}$`)
	gitHubRunAttempt = lazyre.New(`^[1-9][0-9]{0,5}$`)
	gitHubEventName  = lazyre.New(`^[a-z][a-z_]{0,63}$`)
	gitHubRepository = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$`)
	gitHubJob        = lazyre.New(`^[A-Za-z_][A-Za-z0-9_-]{0,99}$`)
)

// gitHubFact is one variable of GitHubVars: the GitHubRun field it fills and
// the shape GitHub gives its value.
type gitHubFact struct {
	name  string
	field func(*GitHubRun) *string
	// shape names what a value must be, fix says what to give instead.
	shape, fix string
	// valid checks a value's shape; nil for free text.
	valid func(string) bool
}

// gitHubFacts are the facts in the order GitHubVars lists and Env sets them.
var gitHubFacts = []gitHubFact{
	{"GITHUB_SHA", func(g *GitHubRun) *string { return &g.SHA },
		"a full commit id", "the 40 lowercase hex digits of github.sha", gitHubSHA.MatchString},
	{"GITHUB_REF", func(g *GitHubRun) *string { return &g.Ref },
		"a full ref", "github.ref, e.g. refs/heads/main or refs/pull/42/merge", validRef},
	{"GITHUB_EVENT_NAME", func(g *GitHubRun) *string { return &g.EventName },
		"an event name", "github.event_name, e.g. pull_request or schedule", gitHubEventName.MatchString},
	{"GITHUB_RUN_ID", func(g *GitHubRun) *string { return &g.RunID },
		"a run id", "the digits of github.run_id, e.g. 1234567890", gitHubRunID.MatchString},
	{"GITHUB_RUN_ATTEMPT", func(g *GitHubRun) *string { return &g.RunAttempt },
		"a run attempt", "github.run_attempt, a number from 1", gitHubRunAttempt.MatchString},
	{"GITHUB_REPOSITORY", func(g *GitHubRun) *string { return &g.Repository },
		"a repository", "github.repository, owner/name such as radixark/miles", gitHubRepository.MatchString},
	{"GITHUB_SERVER_URL", func(g *GitHubRun) *string { return &g.ServerURL },
		"a server URL", "github.server_url, e.g. https://github.com (no credentials, path or query)", validServerURL},
	// The workflow's name is free text.
	{"GITHUB_WORKFLOW", func(g *GitHubRun) *string { return &g.Workflow }, "", "", nil},
	{"GITHUB_JOB", func(g *GitHubRun) *string { return &g.Job },
		"a job id", "github.job, the job's key in the workflow", gitHubJob.MatchString},
}

// factNames are the variable names of gitHubFacts, in order.
func factNames() []string {
	names := make([]string, len(gitHubFacts))
	for i, f := range gitHubFacts {
		names[i] = f.name
	}
	return names
}

// factNamed is the fact of a variable name, nil for a name off GitHubVars.
func factNamed(name string) *gitHubFact {
	for i := range gitHubFacts {
		if gitHubFacts[i].name == name {
			return &gitHubFacts[i]
		}
	}
	return nil
}

func validRef(v string) bool { return strings.HasPrefix(v, "refs/") && !strings.HasPrefix(v, "refs/-") }

func validServerURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" &&
		u.User == nil && strings.Trim(u.Path, "/") == "" && u.RawQuery == "" && u.Fragment == ""
}

// checkGitHubValue checks one fact: no control character (a newline would
// add a variable to an env file), bounded, and the shape GitHub gives it.
func checkGitHubValue(name, value string) error {
	if value == "" {
		return nil
	}
	if len(value) > MaxGitHubValue {
		return fmt.Errorf("%s is %d bytes, more than the %d a GitHub run fact holds; give the value GitHub Actions sets", name, len(value), MaxGitHubValue)
	}
	if !utf8.ValidString(value) || strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%s %q holds a control character (a newline or NUL); give the one-line value GitHub Actions sets", name, redacted(value))
	}
	f := factNamed(name)
	switch {
	case f == nil:
		return errors.New("unknown GitHub run fact " + name)
	case f.valid == nil || f.valid(value):
		return nil
	}
	return fmt.Errorf("%s %q is not %s; give %s", name, redacted(value), f.shape, f.fix)
}

// redacted is a value as an error may show it: a URL's credentials
// (https://user:token@host) are replaced by ***.
func redacted(value string) string {
	scheme, rest, ok := strings.Cut(value, "://")
	if !ok {
		return value
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		return scheme + "://***@" + rest[at+1:]
	}
	return value
}
