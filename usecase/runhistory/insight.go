package runhistory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// SlowestRequest is `miles-ci history slowest`: the tests with the highest
// observed p90 in the calibration's window, beside their est_time.
type SlowestRequest struct {
	Repo, DB string
	AsOf     time.Time
	Events   []string
	// Top is how many to list (0: DefaultSlowest).
	Top int
}

// DefaultSlowest is how many tests history slowest lists by default;
// DefaultTrendDays how many days history trend shows.
const (
	DefaultSlowest   = 20
	DefaultTrendDays = 90
)

// Validate checks the request before anything is read.
func (r SlowestRequest) Validate() error {
	if r.DB == "" || r.AsOf.IsZero() {
		return errors.New("history slowest: no history database or date")
	}
	if r.Top < 0 {
		return fmt.Errorf("--top %d: give a count of 1 or more", r.Top)
	}
	return usecase.CheckHistoryEvents(r.Events)
}

// SlowTest is one identity's observed p90 (the calibration's: its latest
// samples, at least estimate.MinSamples) and the est_time the checkout
// registers for it now (0 when it registers none: Registered false).
type SlowTest struct {
	estimate.Identity
	Samples int     `json:"samples"`
	P90     float64 `json:"observed_p90_s"`
	// Calibrated is the est_time est-time would write.
	Calibrated int     `json:"calibrated_est_time"`
	EstTime    float64 `json:"est_time"`
	Registered bool    `json:"registered"`
}

// SlowestAnswer is the slowest tests, highest p90 first, and what the read
// found.
type SlowestAnswer struct {
	From   time.Time  `json:"from"`
	Before time.Time  `json:"before"`
	Tests  []SlowTest `json:"tests"`
	Found  string     `json:"found"`
}

// Slowest lists the tests by observed p90, highest first (then by
// identity), each with its registered est_time.
func Slowest(ctx context.Context, r SlowestRequest) (SlowestAnswer, error) {
	if err := r.Validate(); err != nil {
		return SlowestAnswer{}, err
	}
	root, err := policy.CheckCheckout(r.Repo)
	if err != nil {
		return SlowestAnswer{}, err
	}
	_, reg, err := policy.LoadTablesAndRegistry(root)
	if err != nil {
		return SlowestAnswer{}, err
	}
	store, err := history.OpenRead(ctx, r.DB)
	if err != nil {
		return SlowestAnswer{}, err
	}
	defer store.Close()
	from, before := estimate.Window(r.AsOf)
	samples, found, err := readSamples(ctx, store, sampleQuery(from, before, r.Events))
	if err != nil {
		return SlowestAnswer{}, err
	}
	ans := SlowestAnswer{From: from, Before: before, Tests: []SlowTest{}, Found: found}
	for id, e := range estimate.Build(samples) {
		t := SlowTest{Identity: id, Samples: e.Samples, P90: e.P90, Calibrated: e.EstTime}
		t.EstTime, t.Registered = registeredEstTime(reg, id)
		ans.Tests = append(ans.Tests, t)
	}
	slices.SortFunc(ans.Tests, func(a, b SlowTest) int {
		return cmp.Or(cmp.Compare(b.P90, a.P90), cmp.Compare(a.TestPath, b.TestPath), cmp.Compare(a.Backend, b.Backend), cmp.Compare(a.Suite, b.Suite))
	})
	top := r.Top
	if top == 0 {
		top = DefaultSlowest
	}
	ans.Tests = ans.Tests[:min(top, len(ans.Tests))]
	return ans, nil
}

// sampleQuery is the calibration's query (rules §13.2), with events
// widened when given.
func sampleQuery(from, before time.Time, events []string) history.SampleQuery {
	if len(events) == 0 {
		events = []string{"schedule"}
	}
	return history.SampleQuery{From: from, Before: before, Events: events, Ref: "refs/heads/main", Limit: estimate.MaxSamples}
}

// registeredEstTime is the est_time of the checkout's active registration
// of id (the first, in registry order).
func registeredEstTime(reg *policy.Registry, id estimate.Identity) (float64, bool) {
	for _, g := range reg.Registrations {
		if g.File == id.TestPath && estimate.BackendName(g.Backend) == id.Backend && g.Suite == id.Suite && g.Disabled == nil {
			return g.EstTime, true
		}
	}
	return 0, false
}

// Text is the answer as `history slowest` prints it.
func (a SlowestAnswer) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "slowest tests by observed p90, %s to %s (est_time: what the checkout registers; calibrated: what est-time would write)\n",
		a.From.Format("2006-01-02"), a.Before.Format("2006-01-02"))
	if len(a.Tests) == 0 {
		b.WriteString("no test has the 3 samples a p90 needs\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%-60s %-5s %-22s %7s %10s %10s %10s\n", "TEST", "HW", "SUITE", "SAMPLES", "P90", "EST_TIME", "CALIBRATED")
	for _, t := range a.Tests {
		est := "-"
		if t.Registered {
			est = fmt.Sprintf("%.0fs", t.EstTime)
		}
		// A store's rows are outside input: each field shows on its line.
		fmt.Fprintf(&b, "%-60s %-5s %-22s %7d %9.0fs %10s %9ds\n", printable.Line(t.TestPath), printable.Line(t.Backend), printable.Line(t.Suite), t.Samples, t.P90, est, t.Calibrated)
	}
	return b.String()
}

// TrendRequest is `miles-ci history trend FILE`: every attempt of one test
// file over the last Days days before AsOf's midnight, oldest first.
type TrendRequest struct {
	DB, File string
	AsOf     time.Time
	// Days is how many days before AsOf's midnight (0: DefaultTrendDays).
	Days int
}

// Validate checks the request before anything is read.
func (r TrendRequest) Validate() error {
	switch {
	case r.File == "":
		return errors.New("history trend: give the test file, e.g. tests/e2e/megatron/test_qwen3_4b_ckpt.py")
	case r.DB == "" || r.AsOf.IsZero():
		return errors.New("history trend: no history database or date")
	case r.Days < 0:
		return fmt.Errorf("--days %d: give 1 or more", r.Days)
	}
	return nil
}

// TrendAnswer is one file's attempts, oldest first.
type TrendAnswer struct {
	File     string        `json:"file"`
	From     time.Time     `json:"from"`
	Before   time.Time     `json:"before"`
	Attempts []history.Row `json:"attempts"`
}

// Trend reads every attempt of the file in the window, oldest first.
func Trend(ctx context.Context, r TrendRequest) (TrendAnswer, error) {
	if err := r.Validate(); err != nil {
		return TrendAnswer{}, err
	}
	file := path.Clean(strings.TrimPrefix(r.File, "./"))
	days := r.Days
	if days == 0 {
		days = DefaultTrendDays
	}
	_, before := estimate.Window(r.AsOf)
	from := before.AddDate(0, 0, -days)
	store, err := history.OpenRead(ctx, r.DB)
	if err != nil {
		return TrendAnswer{}, err
	}
	defer store.Close()
	rows, err := store.Rows(ctx, from, before)
	if err != nil {
		return TrendAnswer{}, err
	}
	ans := TrendAnswer{File: file, From: from, Before: before, Attempts: []history.Row{}}
	for _, row := range rows {
		if row.TestPath == file {
			ans.Attempts = append(ans.Attempts, row)
		}
	}
	slices.SortStableFunc(ans.Attempts, func(a, b history.Row) int { return a.RecordedAt.Compare(b.RecordedAt) })
	return ans, nil
}

// trendWidth is the widest bar of the trend's text.
const trendWidth = 40

// Text is the answer as `history trend` prints it: one line per attempt
// with a bar of its seconds, and '|' where the est_time of that run was.
func (a TrendAnswer) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d attempt(s) from %s to %s\n", printable.Line(a.File), len(a.Attempts), a.From.Format("2006-01-02"), a.Before.Format("2006-01-02"))
	if len(a.Attempts) == 0 {
		b.WriteString("no attempt of this file in the window; check the path (repo-relative, e.g. tests/e2e/...) or give more --days\n")
		return b.String()
	}
	top := 1.0
	for _, r := range a.Attempts {
		for _, v := range []float64{r.ElapsedS, r.EstimatedS} {
			if v > top && !math.IsInf(v, 1) {
				top = v
			}
		}
	}
	// at is a value's column; a value the attempt rule refuses (NaN,
	// Infinity) draws nothing.
	at := func(v float64) int {
		if !(v >= 0) || math.IsInf(v, 1) {
			return 0
		}
		return min(trendWidth, int(v/top*trendWidth))
	}
	for _, r := range a.Attempts {
		bar := []byte(strings.Repeat(" ", trendWidth+1))
		for i := range at(r.ElapsedS) {
			bar[i] = '#'
		}
		bar[at(r.EstimatedS)] = '|'
		fmt.Fprintf(&b, "%s  %-7s %7.0fs  est %5.0fs  %s  %s %s run %d/%d\n", r.RecordedAt.UTC().Format("2006-01-02 15:04"), printable.Line(r.Status), r.ElapsedS, r.EstimatedS,
			bar, printable.Line(r.Backend), printable.Line(r.Suite), r.RunID, r.RunAttempt)
	}
	return b.String()
}
