package runhistory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/history"
)

// readSamples reads q's samples and says how many it found and what it
// left out of the table, and why (window, events, ref, status), with what
// to pass to count local runs: an answer on few samples explains itself.
func readSamples(ctx context.Context, store history.Store, q history.SampleQuery) ([]estimate.Sample, string, error) {
	samples, err := store.Samples(ctx, q)
	if err != nil {
		return nil, "", err
	}
	c, err := store.Census(ctx, q)
	if err != nil {
		return nil, "", err
	}
	return samples, Found(c, q, len(samples)), nil
}

// Found is what a read of q found, from its census: the samples, then each
// filter's cut, then how to count local runs and later rows.
func Found(c history.Census, q history.SampleQuery, samples int) string {
	day := func(t interface{ Format(string) string }) string { return t.Format("2006-01-02") }
	events := strings.Join(q.Events, " ")
	var b strings.Builder
	fmt.Fprintf(&b, "found %d sample(s) of %d row(s) in the history: %d outside the window [%s, %s)", samples, c.Rows, c.Rows-c.InWindow, day(q.From), day(q.Before))
	fmt.Fprintf(&b, ", %d of events other than %s, %d on refs other than %s, %d not PASS", c.InWindow-c.OfEvents, events, c.OfEvents-c.OnRef, q.Ref, c.OnRef-c.Passed)
	if extra := c.Passed - samples; extra > 0 {
		fmt.Fprintf(&b, ", %d beyond a test's latest %d or with seconds the attempt rule refuses", extra, q.Limit)
	}
	if !slices.Contains(q.Events, "local") {
		fmt.Fprintf(&b, "; %d row(s) of local runs are in the window: pass --events %s local to count them", c.Local, events)
	}
	if c.Later > 0 {
		fmt.Fprintf(&b, "; %d row(s) were recorded on or after %s, after the window: pass --as-of %s or later to count them", c.Later, day(q.Before), day(q.Before.AddDate(0, 0, 1)))
	}
	return b.String()
}
