package cli

import (
	"context"
	"time"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/github"
)

// githubFlags are --pr, --github-repo and --github-step-summary, shared by
// every command that reads a pull request's trigger facts.
type githubFlags struct {
	pr, repo, summary *string
	given             func(name string) bool
}

const (
	prHelp      = "read pull request N's trigger facts (body, labels, head, fork, changed files) from GitHub; flags given on the command line win"
	repoHelp    = "the repository of --pr, owner/name"
	summaryHelp = "append a Markdown report to this file (env GITHUB_STEP_SUMMARY)"
)

// addGitHubFlags declares the GitHub flags. A --pr that is not a number, a
// --github-repo that is not owner/name, and --github-repo without --pr (alone
// it would be silently ignored) are usage errors, like any other bad flag value.
func addGitHubFlags(fs *flagSet) *githubFlags {
	g := &githubFlags{
		pr:      fs.String("pr", "N", prHelp),
		repo:    fs.String("github-repo", "OWNER/NAME", repoHelp+" (default "+github.DefaultRepo+")"),
		summary: fs.String("github-step-summary", "FILE", summaryHelp),
		given:   fs.Given,
	}
	fs.check(func() error {
		if fs.Given("github-repo") && !fs.Given("pr") {
			return github.ErrRepoWithoutPR
		}
		if !fs.Given("pr") {
			return nil
		}
		if _, err := github.ParseNumber(*g.pr); err != nil {
			return err
		}
		if fs.Given("github-repo") {
			if _, _, err := github.ParseRepo(*g.repo); err != nil {
				return err
			}
		}
		return nil
	})
	return g
}

// fetchTimeout bounds everything one command asks GitHub.
const fetchTimeout = 2 * time.Minute

// active reports whether --pr was given.
func (g *githubFlags) active() bool { return g.given("pr") }

func (g *githubFlags) repoName() string {
	if *g.repo == "" {
		return github.DefaultRepo
	}
	return *g.repo
}

// token is the GitHub token from the environment ("" = anonymous).
func token(env Env) string {
	if t := env.Getenv("GITHUB_TOKEN"); t != "" {
		return t
	}
	return env.Getenv("GH_TOKEN")
}

// client makes a GitHub client from the environment: GITHUB_API_URL (set in
// Actions, and by tests to a stand-in), GITHUB_TOKEN or GH_TOKEN.
func (g *githubFlags) client(env Env) (*github.Client, error) {
	return github.NewClient(apiOptions(env))
}

// apiOptions say how to reach GitHub, from the environment.
func apiOptions(env Env) github.Options {
	return github.Options{APIURL: env.Getenv("GITHUB_API_URL"), Token: token(env)}
}

// fetch reads the pull request --pr names (github.Fetch: the event payload
// at GITHUB_EVENT_PATH first, when it is that PR, then the API).
func (g *githubFlags) fetch(env Env, needFiles bool) (*github.PR, error) {
	n, err := github.ParseNumber(*g.pr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	return github.Fetch(ctx, github.Request{
		Repo: g.repoName(), Number: n, EventPath: env.Getenv("GITHUB_EVENT_PATH"), Files: needFiles,
		Options: apiOptions(env),
	})
}

// note prints the PR the answer is for, as a notice on stderr so stdout keeps
// the command's own output.
func (g *githubFlags) note(env Env, pr *github.PR) {
	annotate(env, "notice", "trigger facts of "+pr.Describe())
}

// writeSummary appends Markdown to --github-step-summary, else to
// $GITHUB_STEP_SUMMARY when set.
func (g *githubFlags) writeSummary(env Env, markdown string) error {
	path := *g.summary
	if !g.given("github-step-summary") {
		path = env.Getenv("GITHUB_STEP_SUMMARY")
	}
	if path == "" || markdown == "" {
		return nil
	}
	return ghoutput.AppendStepSummary(path, markdown)
}

// lookupDeps looks up the #N dependency refs of a decision. It asks GitHub
// only when --pr was given or a token is set; otherwise, and on any failure,
// it says so beside the decision and never fails.
func (g *githubFlags) lookupDeps(env Env, d deps.Decision) []github.DependencyPR {
	var c *github.Client
	why := "offline (no --pr and no GITHUB_TOKEN or GH_TOKEN)"
	if g.active() || token(env) != "" {
		var err error
		if c, err = g.client(env); err != nil {
			c, why = nil, err.Error()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	return github.LookupDependencyPRs(ctx, c, d, why)
}

// readBodyOrPR returns the PR body: --pr-body-file wins, then --pr's body,
// then $PR_BODY. pr is the fetched pull request, or nil without --pr.
func readBodyOrPR(fs *flagSet, g *githubFlags, path string) (body string, pr *github.PR, err error) {
	if g.active() {
		if pr, err = g.fetch(fs.env, false); err != nil {
			return "", nil, err
		}
		g.note(fs.env, pr)
		if !fs.Given("pr-body-file") {
			return pr.Body, pr, nil
		}
	}
	body, err = readBody(fs, path)
	return body, pr, err
}
