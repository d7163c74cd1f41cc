package cli

import (
	"io"

	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("lint", "drift between the CI tables, the workflows and the tests that makes CI skip or mis-run tests", runLint)
}

func runLint(args []string, env Env) int {
	fs := newFlagSet("lint", "[--repo DIR] [--json]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout to lint (default: the current folder)")
	asJSON := fs.Bool("json", "print JSON instead of text")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	ans, err := usecase.Lint(*repo, "")
	printMessages(env, ans.Messages)
	if err != nil {
		return fail(env, err)
	}
	code := 0
	if !ans.OK() {
		code = 1
	}
	if *asJSON {
		if c := printJSON(env, ans); c != 0 {
			return c
		}
		return code
	}
	if env.Getenv("GITHUB_ACTIONS") == "true" {
		// Under GitHub Actions each drift shows on its file and line in the
		// PR diff; the same lines as text would show only in the log.
		annotateOut(env, ans.Annotations())
		return code
	}
	io.WriteString(env.Stdout, ans.Text())
	return code
}
