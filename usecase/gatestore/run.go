package gatestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/usecase"
)

// RunStore is a run's --gate-db: the judge of its stage runs' records and,
// on a baseline-writing run, where the verdicts are stored after the
// results.
type RunStore struct {
	// Judge judges each CUDA stage run's records (usecase.WithGate).
	Judge usecase.GateJudge
	db    string
	read  *history.MetricStore
}

// OpenRun opens db ("" = none: the records are judged without a history)
// for reading the baselines of a run of the checkout repo; a SQLite file
// that does not exist yet is an empty history (a baseline-writing run
// creates it). A store that cannot be opened is no error here: each file
// judged against it gets no verdict, saying why (the gate never stops a
// run), and err says it once for a warning.
func OpenRun(ctx context.Context, db, repo string) (*RunStore, error) {
	r := &RunStore{Judge: usecase.GateJudge{Source: usecase.CheckoutSource(repo)}, db: db}
	if db == "" {
		return r, nil
	}
	r.Judge.Store = history.Redact(db)
	if !history.IsPostgres(db) {
		if _, err := os.Lstat(db); errors.Is(err, fs.ErrNotExist) {
			return r, nil
		}
	}
	s, err := history.OpenMetrics(ctx, db, false)
	if err != nil {
		r.Judge.Baselines = failing{err}
		return r, fmt.Errorf("the metric gate's store: %w; the records are judged without it (no verdict)", err)
	}
	r.read, r.Judge.Baselines, r.Judge.Store = s, s, s.Where()
	return r, nil
}

// failing is a store that could not be opened: each read says why.
type failing struct{ err error }

func (f failing) Recent(context.Context, metricgate.Identity, metricgate.Coordinate, int) ([]float64, error) {
	return nil, f.err
}

// Close closes the store.
func (r *RunStore) Close() {
	if r.read != nil {
		r.read.Close()
	}
}

// StoreBaselines stores, for each summary of a baseline-writing run, each
// file the gate judged with declarations (run_gate_hook's write_run: the
// run's identity, provenance, trusted flag and one value per coordinate),
// after the results are written. It returns how many runs it stored.
func (r *RunStore) StoreBaselines(ctx context.Context, summaries []report.Summary, now time.Time) (int, error) {
	n := 0
	var errs []error
	var w *history.MetricStore
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	for _, s := range summaries {
		g := s.Gate
		if g == nil || !g.WritesBaseline || g.Error != "" {
			continue
		}
		for _, f := range g.Files {
			if f.Verdict == metricgate.NoVerdict || len(f.Coordinates) == 0 {
				continue
			}
			if r.db == "" {
				return n, nil
			}
			if w == nil {
				var err error
				if w, err = history.OpenMetrics(ctx, r.db, true); err != nil {
					return n, err
				}
			}
			_, err := w.WriteRun(ctx, history.MetricRun{Identity: f.Identity, Provenance: g.Provenance, CreatedAt: now,
				Trusted: f.Verdict == metricgate.Trusted, Values: f.Samples()})
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f.TestPath, err))
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}
