// Package gatestore holds the metric-history gate's use cases that need its
// store (rules §16), which only the command calls: `miles-ci gate` against
// a store, and a run's verdicts against --gate-db, written on the runs that
// write the baseline. Apart from usecase so the module links no history
// driver (layering.ModuleOmits); the gate's rules are metricgate's.
package gatestore

import (
	"context"
	"fmt"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// EnvNeon is Miles' own variable for its hosted store, which its harness
// reads (NEON_DATABASE_URL_ENV).
const EnvNeon = "NEON_DATABASE_URL"

// DB is the store a command uses: the flag, else $MILES_CI_GATE_DB, else
// (for `miles-ci gate`, as Miles' harness reads it) $NEON_DATABASE_URL;
// "" is none.
func DB(flag string, getenv func(string) string, neon bool) string {
	if flag != "" {
		return flag
	}
	if v := getenv(history.EnvGateDB); v != "" {
		return v
	}
	if neon {
		return getenv(EnvNeon)
	}
	return ""
}

// Request is `miles-ci gate` with its store.
type Request struct {
	usecase.GateRequest
	// DB is the metric-history store ("" = none: every coordinate is a
	// cold start).
	DB string
	// Cadence is the run's resolved cadence: a baseline-writing one
	// (nightly, weekly) stores the run and its values in DB.
	Cadence policy.Cadence
	// Lookup reads the GitHub run's facts for the stored run's provenance
	// (os.LookupEnv's shape).
	Lookup func(string) (string, bool)
	// Now is the stored run's created_at.
	Now time.Time
}

// Answer is the verdict, the store it was read from, and what was stored.
type Answer struct {
	usecase.GateAnswer
	// Store names the store (its password hidden), "" when none.
	Store string `json:"store"`
	// Baseline says what the run did with the store: "written" (a
	// baseline-writing run stored it, RunID), "shadow" (only shown),
	// "none" (nothing to write: no declaration, or no verdict).
	Baseline string `json:"baseline"`
	RunID    string `json:"run_id,omitempty"`
}

// Gate answers `miles-ci gate` from the store.
func Gate(ctx context.Context, r Request) (Answer, error) {
	if err := r.Validate(); err != nil {
		return Answer{}, err
	}
	var ans Answer
	form, err := usecase.GateForm(r.Repo)
	if err != nil {
		return ans, err
	}
	write := form.WritesBaseline(string(r.Cadence))
	var store *history.MetricStore
	if r.DB != "" {
		if store, err = history.OpenMetrics(ctx, r.DB, write); err != nil {
			return ans, err
		}
		defer store.Close()
		r.Baselines, ans.Store = store, store.Where()
	}
	if ans.GateAnswer, err = usecase.Gate(ctx, r.GateRequest); err != nil {
		return ans, err
	}
	v := ans.Verdict
	switch {
	case !write:
		ans.Baseline = "shadow"
	case store == nil || v.Verdict == metricgate.NoVerdict || len(v.Coordinates) == 0:
		ans.Baseline = "none"
	default:
		id, err := store.WriteRun(ctx, history.MetricRun{Identity: v.Identity, Provenance: metricgate.ProvenanceFromEnv(r.Lookup),
			CreatedAt: r.Now, Trusted: v.Verdict == metricgate.Trusted, Values: v.Samples()})
		if err != nil {
			return ans, fmt.Errorf("storing the baseline: %w", err)
		}
		ans.Baseline, ans.RunID = "written", id
	}
	return ans, nil
}
