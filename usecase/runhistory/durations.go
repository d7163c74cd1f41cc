package runhistory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/whatif"
)

// DurationsRequest is what `ci` reads of the runtime history before it
// runs or predicts (issue 42): the samples est-time reads (PASS attempts of
// Events on refs/heads/main in the 21 days before AsOf's midnight, local
// runs of any ref with the event local, each file's latest 15) and the
// shard set-ups recorded beside them.
type DurationsRequest struct {
	// DB is the history (see DB); Configured says it was named (--db, the
	// environment): a default file that does not exist is then no error.
	DB         string
	Configured bool
	// AsOf is the UTC date whose midnight ends the window.
	AsOf time.Time
	// Events are the samples' events (nil: schedule, as est-time).
	Events []string
	// Warn gets the rows the store skipped; nil drops them.
	Warn func(string)
}

// Validate checks the request before anything is read.
func (r DurationsRequest) Validate() error {
	if r.AsOf.IsZero() {
		return errors.New("the runtime history: no --as-of date")
	}
	return usecase.CheckHistoryEvents(r.Events)
}

// Durations are the test files' and stages' times the history holds, and
// what the read found; a default history file that does not exist holds
// none (every file at its est_time).
func Durations(ctx context.Context, r DurationsRequest) (*whatif.Durations, string, error) {
	if err := r.Validate(); err != nil {
		return nil, "", err
	}
	if !r.Configured {
		if _, err := os.Stat(r.DB); errors.Is(err, fs.ErrNotExist) {
			return whatif.NewDurations(nil, nil), "no runtime history at " + r.DB, nil
		}
	}
	from, before := estimate.Window(r.AsOf)
	store, err := history.OpenRead(ctx, r.DB)
	if err != nil {
		return nil, "", err
	}
	defer store.Close()
	samples, found, err := readSamples(ctx, store, sampleQuery(from, before, r.Events))
	if err != nil {
		return nil, "", err
	}
	shards, err := store.Shards(ctx, from, before)
	if err != nil {
		return nil, "", err
	}
	warnSkipped(store, r.Warn)
	set := setups(shards, r.Events)
	return whatif.NewDurations(samples, set), fmt.Sprintf("%s; %d recorded shard run(s) of those events give set-ups", found, len(set)), nil
}
