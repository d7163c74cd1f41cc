package cli

import (
	"fmt"

	"github.com/radixark/miles-ci/policy"
)

func init() {
	register("lint", "drift between the CI tables, the workflows and the tests that makes CI skip or mis-run tests", runLint)
}

// lintResult is what `lint --json` prints.
type lintResult struct {
	Drift []policy.Drift `json:"drift"`
	// Tables say where each table came from.
	Tables []policy.Origin `json:"tables"`
}

func runLint(args []string, env Env) int {
	fs := newFlagSet("lint", "[--repo DIR] [--json]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout to lint (default: the current folder)")
	asJSON := fs.Bool("json", "print JSON instead of text")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	tables, err := loadTables(env, *repo)
	if err != nil {
		return fail(env, err)
	}
	reg, err := tables.LoadRegistry(*repo)
	if err != nil {
		return fail(env, err)
	}
	drift := policy.Lint(reg)
	code := 0
	if len(drift) > 0 {
		code = 1
	}
	if *asJSON {
		if drift == nil {
			drift = []policy.Drift{}
		}
		if c := printJSON(env, lintResult{Drift: drift, Tables: tables.Origins}); c != 0 {
			return c
		}
		return code
	}
	for _, d := range drift {
		fmt.Fprintln(env.Stdout, d.String())
	}
	if code == 0 {
		fmt.Fprintf(env.Stdout, "no drift: %d suites, %d stages, %d labels, %d registrations agree\n",
			len(tables.Suites.CPU)+len(tables.Suites.CUDA)+len(tables.Suites.ROCM), len(tables.Roster), len(tables.Labels), len(reg.Registrations))
	} else {
		fmt.Fprintf(env.Stdout, "%d drift(s) found\n", len(drift))
	}
	return code
}
