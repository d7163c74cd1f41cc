package cli

import "github.com/radixark/miles-ci/policy"

// loadTables reads the CI tables of the checkout at repo ("" is the current
// folder) and says once on stderr which ones are the built-in values, so
// that stdout (and --json) stays the same either way.
func loadTables(env Env, repo string) (*policy.Tables, error) {
	t, err := policy.LoadTables(repo)
	if err != nil {
		return nil, err
	}
	if note := t.FallbackNote(repo); note != "" {
		notice(env, note)
	}
	return t, nil
}
