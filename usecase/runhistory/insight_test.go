package runhistory

import (
	"context"
	"encoding/xml"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/history/historytest"
)

var fixtureAsOf = time.Date(2026, 8, 12, 0, 0, 0, 0, time.UTC)

// TestEstTimeSaysWhatItFound: on an empty history est-time says it found 0
// samples and how to count local runs; on the fixture it counts what each
// filter left out, on both back ends.
func TestEstTimeSaysWhatItFound(t *testing.T) {
	for name, newDB := range historytest.DBs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := newDB(t)
			tree := copyTree(t, "testdata/esttime/tree")
			res, err := EstTime(ctx, EstTimeRequest{Repo: tree, DB: db, AsOf: fixtureAsOf, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			want := "found 0 sample(s) of 0 row(s) in the history: 0 outside the window [2026-07-22, 2026-08-12), 0 of events other than schedule, 0 on refs other than refs/heads/main, 0 not PASS; 0 row(s) of local runs are in the window: pass --events schedule local to count them"
			if res.Samples != 0 || res.Found != want {
				t.Errorf("empty history: wanted %q, got %d samples and %q", want, res.Samples, res.Found)
			}
			if _, err := Import(ctx, ImportRequest{DB: db, Results: rowsDirs(t), Getenv: os.Getenv}); err != nil {
				t.Fatal(err)
			}
			res, err = EstTime(ctx, EstTimeRequest{Repo: tree, DB: db, AsOf: fixtureAsOf, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			want = "found 71 sample(s) of 85 row(s) in the history: 2 outside the window [2026-07-22, 2026-08-12), 2 of events other than schedule, 1 on refs other than refs/heads/main, 6 not PASS, " +
				"3 beyond a test's latest 15 or with seconds the attempt rule refuses; 1 row(s) of local runs are in the window: pass --events schedule local to count them; " +
				"1 row(s) were recorded on or after 2026-08-12, after the window: pass --as-of 2026-08-13 or later to count them"
			if res.Samples != 71 || res.Found != want {
				t.Errorf("the fixture: wanted %q, got %d samples and %q", want, res.Samples, res.Found)
			}
			// With local asked for, the advice goes.
			res, err = EstTime(ctx, EstTimeRequest{Repo: tree, DB: db, AsOf: fixtureAsOf, DryRun: true, Events: []string{"schedule", "local"}})
			if err != nil || strings.Contains(res.Found, "pass --events") {
				t.Errorf("wanted no --events advice with local asked for, got %q (%v)", res.Found, err)
			}
			// A date before the rows: every one is after the window.
			res, err = EstTime(ctx, EstTimeRequest{Repo: tree, DB: db, AsOf: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), DryRun: true})
			if err != nil || !strings.Contains(res.Found, "were recorded on or after 2026-07-01, after the window: pass --as-of 2026-07-02 or later to count them") {
				t.Errorf("wanted the later rows named, got %q (%v)", res.Found, err)
			}
		})
	}
}

// TestSlowestTrendChart: the history views on the fixture, on both back
// ends: slowest by p90 with est_time beside, one file's trend, the SVG.
func TestSlowestTrendChart(t *testing.T) {
	for name, newDB := range historytest.DBs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := newDB(t)
			if _, err := Import(ctx, ImportRequest{DB: db, Results: rowsDirs(t), Getenv: os.Getenv}); err != nil {
				t.Fatal(err)
			}
			tree := copyTree(t, "testdata/esttime/tree")
			slow, err := Slowest(ctx, SlowestRequest{Repo: tree, DB: db, AsOf: fixtureAsOf, Top: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(slow.Tests) != 3 || !strings.HasPrefix(slow.Found, "found 71 sample(s)") {
				t.Fatalf("wanted the 3 slowest and what was found, got %+v", slow)
			}
			for i, s := range slow.Tests {
				if i > 0 && s.P90 > slow.Tests[i-1].P90 {
					t.Errorf("wanted the highest p90 first, got %+v", slow.Tests)
				}
				if !s.Registered || s.EstTime <= 0 || s.Samples < 3 {
					t.Errorf("wanted each with its registered est_time and 3+ samples, got %+v", s)
				}
			}
			if text := slow.Text(); !strings.Contains(text, "EST_TIME") || !strings.Contains(text, slow.Tests[0].TestPath) {
				t.Errorf("wanted a table naming %s, got\n%s", slow.Tests[0].TestPath, text)
			}
			file := slow.Tests[0].TestPath
			tr, err := Trend(ctx, TrendRequest{DB: db, File: "./" + file, AsOf: fixtureAsOf, Days: 90})
			if err != nil {
				t.Fatal(err)
			}
			if tr.File != file || len(tr.Attempts) < 3 {
				t.Fatalf("wanted the attempts of %s, got %+v", file, tr)
			}
			for i := 1; i < len(tr.Attempts); i++ {
				if tr.Attempts[i].RecordedAt.Before(tr.Attempts[i-1].RecordedAt) {
					t.Errorf("wanted oldest first, got %v", tr.Attempts)
				}
			}
			if text := tr.Text(); strings.Count(text, "\n") != len(tr.Attempts)+1 || !strings.Contains(text, "#") {
				t.Errorf("wanted a line per attempt with its bar, got\n%s", text)
			}
			ch, err := Chart(ctx, ChartRequest{Repo: tree, DB: db, AsOf: fixtureAsOf, Stages: []string{"stage-c-8-gpu-h100"}})
			if err != nil {
				t.Fatal(err)
			}
			checkSVG(t, ch.SVG)
			for _, part := range []string{"est_time against the observed p90, per test", "stage-c-8-gpu-h100: observed load against the estimate, per shard", file} {
				if !strings.Contains(ch.SVG, part) {
					t.Errorf("wanted %q in the SVG", part)
				}
			}
		})
	}
}

// checkSVG: well-formed XML, and nothing it would fetch.
func checkSVG(t *testing.T, svg string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, svg)
		}
	}
	if strings.Count(svg, "http") != 1 || strings.Contains(svg, "href") {
		t.Errorf("wanted no link but the SVG namespace, got\n%s", svg)
	}
}

// A shard with a file never observed says which part is an estimate.
func TestShardsTextNamesTheEstimate(t *testing.T) {
	a := ShardsAnswer{Stage: "s", TimeoutS: 600, Shards: []ShardLoad{{Shard: 0, Today: 500, Calibrated: 450, Observed: 700, Unobserved: 1, UnobservedEst: 300, Files: []string{"a", "b"}}}}
	want := "s: job timeout 600s\n  shard 1/1: est_time 500s, calibrated est_time 450s, observed 400s + est_time 300s of the 1 never observed = 700s (2 files)  OVER THE TIMEOUT: add a shard\n"
	if got := a.Text(); got != want {
		t.Errorf("wanted %q, got %q", want, got)
	}
}

func TestTrendTextDrawsNoBrokenSeconds(t *testing.T) {
	a := TrendAnswer{File: "tests/e2e/x.py", Attempts: nil}
	if !strings.Contains(a.Text(), "no attempt of this file") {
		t.Errorf("wanted the empty trend to say so, got %q", a.Text())
	}
}
