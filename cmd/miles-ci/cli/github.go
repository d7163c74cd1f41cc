package cli

import (
	"context"
	"errors"
	"time"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/gitrepo"
	"github.com/radixark/miles-ci/usecase"
)

// githubFlags are --pr, --github-repo and --github-step-summary, shared by
// every command that reads a pull request's trigger facts.
type githubFlags struct {
	pr, repo, summary *string
	// allowOther takes a checkout at another commit than the PR's
	// (--allow-other-head).
	allowOther *bool
	given      func(name string) bool
}

const (
	prHelp      = "read pull request N's trigger facts (body, labels, head, fork, changed files) from GitHub; flags given on the command line win"
	repoHelp    = "the repository of --pr, owner/name"
	summaryHelp = "append a Markdown report to this file (env GITHUB_STEP_SUMMARY)"
)

// addGitHubFlags declares the GitHub flags of a command that reads the
// checkout (--repo) with the PR's facts, --allow-other-head among them. A
// --pr that is not a number, a --github-repo that is not owner/name, and
// --github-repo without --pr (alone it would be silently ignored) are usage
// errors, like any other bad flag value.
func addGitHubFlags(fs *flagSet) *githubFlags {
	g := addGitHubFlagsNoCheckout(fs)
	g.allowOther = fs.Bool("allow-other-head", "with --pr, take a checkout that is not the pull request's head (nor its merge) as it is, with the PR's facts")
	fs.check(func() error {
		if fs.Given("allow-other-head") && !fs.Given("pr") {
			return errors.New("--allow-other-head goes with --pr: it lets a checkout of another commit stand for the pull request")
		}
		return nil
	})
	return g
}

// addGitHubFlagsNoCheckout declares the GitHub flags of a command that reads
// no checkout (image): it has nothing to check against the PR.
func addGitHubFlagsNoCheckout(fs *flagSet) *githubFlags {
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

// checkout checks that repo, the checkout a command reads with --pr, is the
// pull request's (usecase.CheckPRHead): another commit is an error unless
// --allow-other-head, a folder without .git a notice.
func (g *githubFlags) checkout(env Env, repo string, pr *github.PR) error {
	msgs, err := usecase.CheckPRHead(usecase.PRHeadRequest{Repo: repo, PR: pr, Git: gitrepo.Local{}, AllowOtherHead: g.allowOther != nil && *g.allowOther})
	printMessages(env, msgs)
	return err
}

// noteAndCheck is note, then checkout.
func (g *githubFlags) noteAndCheck(env Env, repo string, pr *github.PR) error {
	g.note(env, pr)
	return g.checkout(env, repo, pr)
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
// then $PR_BODY. pr is the fetched pull request, or nil without --pr; repo
// is the checkout the command reads, which must be the PR's (nil: it reads
// none).
func readBodyOrPR(fs *flagSet, g *githubFlags, repo *string, path string) (body string, pr *github.PR, err error) {
	if g.active() {
		if pr, err = g.fetch(fs.env, false); err != nil {
			return "", nil, err
		}
		g.note(fs.env, pr)
		if repo != nil {
			if err = g.checkout(fs.env, *repo, pr); err != nil {
				return "", nil, err
			}
		}
		if !fs.Given("pr-body-file") {
			return pr.Body, pr, nil
		}
	}
	body, err = readBody(fs, path)
	return body, pr, err
}
