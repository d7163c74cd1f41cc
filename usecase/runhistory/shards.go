package runhistory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/whatif"
)

// ShardRunsOf are the shard runs a graph run records beside its attempts
// (history.ShardTable), by results folder: each shard's start and wall
// time from the run's report, its files' seconds from its summary, and the
// start and time the run predicted for it before it started (pred, nil
// for none).
func ShardRunsOf(rep *cirun.Report, pred *whatif.Prediction, sums map[string]report.Summary) map[string]history.ShardRun {
	out := map[string]history.ShardRun{}
	if rep.Start == nil {
		return out
	}
	predicted := map[string]whatif.PredictedShard{}
	if pred != nil {
		for _, p := range pred.Shards {
			predicted[p.Job] = p
		}
	}
	for _, j := range rep.Jobs {
		sum, ok := sums[j.Results]
		if j.Results == "" || !ok || j.Start == nil || j.Reused {
			continue
		}
		r := history.ShardRun{Job: j.Title(), Stage: j.Stage, Backend: estimate.BackendName(sum.HW), Host: j.Host, Devices: strings.Join(j.Devices.Strings(), ","),
			GPUs: j.GPUs, Model: string(j.Model), State: string(j.State), StartS: seconds(j.Start.Sub(*rep.Start).Seconds()), WallS: seconds(j.Duration)}
		for _, t := range sum.Tests {
			r.TestsS += t.ElapsedS
		}
		r.TestsS = seconds(r.TestsS)
		if p, ok := predicted[r.Job]; ok {
			start, took := p.Start, p.End-p.Start
			r.PredictedStartS, r.PredictedS = &start, &took
		}
		out[j.Results] = r
	}
	return out
}

// seconds keeps a time in the table's range, to the millisecond.
func seconds(s float64) float64 {
	if math.IsNaN(s) || s < 0 {
		return 0
	}
	return math.Round(min(s, estimate.MaxSeconds)*1000) / 1000
}

// setups are the set-ups of the recorded shard runs the samples' rules
// keep (the window, these events on refs/heads/main, local runs of any
// ref).
func setups(shards []history.RecordedShard, events []string) []whatif.Setup {
	if len(events) == 0 {
		events = []string{"schedule"}
	}
	var out []whatif.Setup
	for _, r := range shards {
		if slices.Contains(events, r.Event) && (r.Ref == "refs/heads/main" || r.Event == history.LocalEvent) {
			out = append(out, whatif.Setup{Stage: r.Stage, Seconds: r.SetupS()})
		}
	}
	return out
}

// PredictionsRequest is `miles-ci history predictions`: each recorded
// graph run's measured span against the span it predicted before it ran.
type PredictionsRequest struct {
	DB string
	// Days is how far back (default 30); RunID, when set, shows that run's
	// shards one by one.
	Days  int
	RunID string
	Now   time.Time
	Warn  func(string)
}

// Validate checks the request before anything is read.
func (r PredictionsRequest) Validate() error {
	if r.DB == "" {
		return errors.New("history predictions: no history database; give --db or set " + history.EnvDB)
	}
	if r.Days < 0 {
		return fmt.Errorf("--days %d: give a number of days from 1", r.Days)
	}
	return nil
}

// RunPrediction is one recorded graph run (one attempt): its shards, the
// span they took and the span the run predicted.
type RunPrediction struct {
	RunID      int64     `json:"github_run_id"`
	RunAttempt int       `json:"github_run_attempt"`
	Commit     string    `json:"commit_sha"`
	Event      string    `json:"event_name"`
	RecordedAt time.Time `json:"recorded_at"`
	// Span is the shards' span (from the run's start to the last shard's
	// end); Predicted the predicted span (0: the run predicted none), and
	// Error (Predicted - Span) / Span.
	Span      float64 `json:"span_s"`
	Predicted float64 `json:"predicted_span_s,omitempty"`
	Error     float64 `json:"error,omitempty"`
	// Count is how many shard runs it recorded; Shards are they, by start
	// (only with RunID).
	Count  int                `json:"shard_runs"`
	Shards []history.ShardRun `json:"shards,omitempty"`
}

// PredictionsAnswer lists the runs, newest first.
type PredictionsAnswer struct {
	Runs []RunPrediction `json:"runs"`
}

// Predictions reads the shard runs and compares each run's prediction with
// its measurement.
func Predictions(ctx context.Context, r PredictionsRequest) (PredictionsAnswer, error) {
	if err := r.Validate(); err != nil {
		return PredictionsAnswer{}, err
	}
	days := r.Days
	if days == 0 {
		days = 30
	}
	store, err := history.OpenRead(ctx, r.DB)
	if err != nil {
		return PredictionsAnswer{}, err
	}
	defer store.Close()
	shards, err := store.Shards(ctx, r.Now.AddDate(0, 0, -days), time.Time{})
	if err != nil {
		return PredictionsAnswer{}, err
	}
	warnSkipped(store, r.Warn)
	type key struct {
		id      int64
		attempt int
	}
	byRun := map[key]*RunPrediction{}
	var order []key
	for _, s := range shards {
		k := key{s.RunID, s.RunAttempt}
		if r.RunID != "" && s.RunID != history.LocalRunID(r.RunID) {
			continue
		}
		p := byRun[k]
		if p == nil {
			p = &RunPrediction{RunID: s.RunID, RunAttempt: s.RunAttempt, Commit: s.CommitSHA, Event: s.Event, RecordedAt: s.RecordedAt}
			byRun[k] = p
			order = append(order, k)
		}
		p.Count++
		p.Span = max(p.Span, s.StartS+s.WallS)
		if s.PredictedStartS != nil && s.PredictedS != nil {
			p.Predicted = max(p.Predicted, *s.PredictedStartS+*s.PredictedS)
		}
		if r.RunID != "" {
			p.Shards = append(p.Shards, s.ShardRun)
		}
	}
	ans := PredictionsAnswer{Runs: []RunPrediction{}}
	for i := len(order) - 1; i >= 0; i-- {
		p := *byRun[order[i]]
		p.Span, p.Predicted = seconds(p.Span), seconds(p.Predicted)
		if p.Predicted > 0 && p.Span >= 1 {
			p.Error = math.Round((p.Predicted-p.Span)/p.Span*1000) / 1000
		}
		slices.SortStableFunc(p.Shards, func(a, b history.ShardRun) int { return cmp.Compare(a.StartS, b.StartS) })
		ans.Runs = append(ans.Runs, p)
	}
	if r.RunID != "" && len(ans.Runs) == 0 {
		return ans, fmt.Errorf("history predictions: no recorded shard of run %s in the last %d days; give --days to look further back", r.RunID, days)
	}
	return ans, nil
}

// Text is the answer as `history predictions` prints it.
func (a PredictionsAnswer) Text() string {
	var b strings.Builder
	if len(a.Runs) == 0 {
		b.WriteString("no graph run recorded its shards (miles-ci ci --record records them)\n")
		return b.String()
	}
	for _, r := range a.Runs {
		fmt.Fprintf(&b, "run %d attempt %d (%s, %s, %s): %d shard(s), span %.0f s", r.RunID, r.RunAttempt, r.RecordedAt.Format("2006-01-02 15:04"), r.Event, short(r.Commit), r.Count, r.Span)
		if r.Predicted > 0 {
			fmt.Fprintf(&b, ", predicted %.0f s (%+.0f%%)", r.Predicted, r.Error*100)
		} else {
			b.WriteString(", no prediction")
		}
		b.WriteString("\n")
		for _, s := range r.Shards {
			fmt.Fprintf(&b, "  %-44s %7.0fs start, %6.0fs (set-up %.0f s, tests %.0f s)", s.Job, s.StartS, s.WallS, s.SetupS(), s.TestsS)
			if s.PredictedStartS != nil && s.PredictedS != nil {
				fmt.Fprintf(&b, "; predicted %.0fs start, %.0fs", *s.PredictedStartS, *s.PredictedS)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
