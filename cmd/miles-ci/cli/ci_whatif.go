package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase/ci"
	"github.com/radixark/miles-ci/usecase/runhistory"
	"github.com/radixark/miles-ci/whatif"
)

// printWhatIf prints a what-if's prediction (ci.CIRequest.WhatIf), as text
// or JSON; with --results it writes the prediction's report.html and
// what-if.json there.
func printWhatIf(env Env, ans ci.CIAnswer, asJSON bool, results, repo string) int {
	printMessages(env, ans.Messages)
	var err error
	var files []stagerun.ResultFile
	if results != "" {
		files, err = ans.WhatIfResults()
		if err == nil {
			err = checkResultsDir(results, orDot(repo))
		}
		if err != nil {
			return fail(env, err)
		}
	}
	text := ans.Prediction.Text()
	if asJSON {
		js, err := encode.JSON(ans.Prediction)
		if err != nil {
			return fail(env, err)
		}
		text = string(js)
	}
	// The prediction first, its folder last (finish); the exit status is
	// a dry run's: 125 when a job that should run cannot on this fleet.
	return finish(env, ending{
		verdict: func() {
			if asJSON {
				writeJSON(env.Stdout, []byte(text))
			} else {
				io.WriteString(env.Stdout, text)
			}
		},
		exit: ans.Report.ExitStatus(), dir: results, checkout: orDot(repo), files: files, depth: 1,
		written: func() {
			fmt.Fprintf(env.Stderr, "miles-ci: the prediction's report.html and what-if.json are in %s\n", results)
		},
	})
}

// ciDurations are the test files' and stages' times a run orders its
// shards by and a what-if predicts with: from the runtime history (--db,
// the environment, else the default file where it exists). A run whose
// history cannot be read warns and orders by est_time; a what-if fails.
func ciDurations(fs *flagSet, rf recordFlags, env Env, events []string, asOf string, whatIf bool) (*whatif.Durations, error) {
	read := runhistory.DB
	if whatIf {
		read = func(flag string, getenv func(string) string) (string, bool, error) { return historyDB(fs, flag, env) }
	}
	db, configured, err := read(*rf.db, env.Getenv)
	switch {
	case err != nil && whatIf:
		return nil, err
	case err != nil, !configured && !whatIf && !*rf.record:
		return nil, nil // a run reads the history where it records
	}
	day := time.Now().UTC().AddDate(0, 0, 1)
	if asOf != "" {
		if day, err = asOfDate(asOf); err != nil {
			return nil, err
		}
	}
	ctx, stop := signalContext(env)
	defer stop()
	d, found, err := runhistory.Durations(ctx, runhistory.DurationsRequest{DB: db, Configured: configured, AsOf: day, Events: events, Warn: historyWarn(env)})
	if err != nil {
		if whatIf {
			return nil, fmt.Errorf("--what-if: %w", err)
		}
		warn(env, "runtime history: "+err.Error()+"; the shards are ordered by est_time")
		return nil, nil
	}
	if whatIf {
		annotate(env, "notice", "what-if: runtime history: "+found)
	}
	return d, nil
}
