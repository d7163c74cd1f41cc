package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/usecase/gatestore"
)

// gateDBFlag is --gate-db of run and ci (docs/gate.md).
func gateDBFlag(fs *flagSet) *string {
	return fs.String("gate-db", "URL|PATH", gateDBHelp+". A CUDA stage's metric records are judged against it, and a nightly or weekly run stores them after its results (default: none, every coordinate a cold start)", fromEnv(history.EnvGateDB))
}

// checkGateDB refuses what is wrong with --gate-db before anything runs:
// the store the container's harness writes to itself (usecase.CheckGateDB),
// and warns of a password on the command line.
func checkGateDB(fs *flagSet, env Env, db string, secrets map[string]string) error {
	if fs.Given("gate-db") && history.HasPassword(db) {
		warn(env, "--gate-db holds a password, which every user of this machine can read in the process list; set "+history.EnvGateDB+" or use ~/.pgpass instead")
	}
	return usecase.CheckGateDB(db, secrets[policy.SecretNeon])
}

// openGate opens --gate-db for the run's gate; a store that cannot be opened
// is a warning, the records then judged without a verdict.
func openGate(ctx context.Context, env Env, db, repo string) *gatestore.RunStore {
	g, err := gatestore.OpenRun(ctx, db, repo)
	if err != nil {
		warn(env, err.Error())
	}
	return g
}

// storeGate stores a baseline-writing run's verdicts after its results; a
// failure is a warning (the run's result stands).
func storeGate(ctx context.Context, env Env, g *gatestore.RunStore, summaries []report.Summary) {
	n, err := g.StoreBaselines(ctx, summaries, time.Now())
	if n > 0 {
		fmt.Fprintf(env.Stderr, "miles-ci: stored the metric gate's baseline of %d file(s) in %s\n", n, g.Judge.Store)
	}
	if err != nil {
		warn(env, "metric gate: storing the baseline failed (the run's result stands): "+err.Error())
	}
}
