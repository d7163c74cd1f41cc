package runhistory

import (
	"context"
	"errors"
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/radixark/miles-ci/internal/plural"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// ChartRequest is `miles-ci history chart`: an SVG of est_time against the
// observed p90 per test, and of each shard's observed load against its
// estimate, made from the database alone (no network).
type ChartRequest struct {
	Repo, DB string
	AsOf     time.Time
	Events   []string
	// Stages are the stages whose shards to draw (nil: every stage of the
	// roster miles-ci runs).
	Stages []string
	// Top bounds the tests drawn (0: chartTests).
	Top int
}

// chartTests is how many tests a chart draws by default.
const chartTests = 40

// Validate checks the request before anything is read.
func (r ChartRequest) Validate() error {
	if r.DB == "" || r.AsOf.IsZero() {
		return errors.New("history chart: no history database or date")
	}
	if r.Top < 0 {
		return fmt.Errorf("--top %d: give a count of 1 or more", r.Top)
	}
	return usecase.CheckHistoryEvents(r.Events)
}

// ChartAnswer is what the chart draws, and the SVG.
type ChartAnswer struct {
	Slowest SlowestAnswer
	Shards  []ShardsAnswer
	SVG     string
}

// Chart reads the slowest tests and each stage's shards and draws them.
func Chart(ctx context.Context, r ChartRequest) (ChartAnswer, error) {
	if err := r.Validate(); err != nil {
		return ChartAnswer{}, err
	}
	top := r.Top
	if top == 0 {
		top = chartTests
	}
	slow, err := Slowest(ctx, SlowestRequest{Repo: r.Repo, DB: r.DB, AsOf: r.AsOf, Events: r.Events, Top: top})
	if err != nil {
		return ChartAnswer{}, err
	}
	stages := r.Stages
	if stages == nil {
		tables, err := policy.LoadTables(r.Repo)
		if err != nil {
			return ChartAnswer{}, err
		}
		for _, st := range usecase.Stages(tables) {
			if !tables.IsPoolSuite(st.Name) {
				stages = append(stages, st.Name)
			}
		}
	}
	ans := ChartAnswer{Slowest: slow}
	for _, s := range stages {
		sh, err := Shards(ctx, ShardsRequest{Repo: r.Repo, DB: r.DB, Stage: s, AsOf: r.AsOf, Events: r.Events})
		if err != nil {
			return ans, fmt.Errorf("stage %s: %w", s, err)
		}
		ans.Shards = append(ans.Shards, sh)
	}
	ans.SVG = ChartSVG(ans.Slowest, ans.Shards)
	return ans, nil
}

// The chart's geometry, in SVG user units.
const (
	chartWidth = 960
	labelWidth = 420
	barArea    = chartWidth - labelWidth - 90
	rowHeight  = 18
	barHeight  = 7
)

// ChartSVG draws the tests (est_time and observed p90, one pair of bars a
// test) and the shards (est_time total and observed load, one pair a shard,
// a line at the job's timeout) as one self-contained SVG.
func ChartSVG(slow SlowestAnswer, shards []ShardsAnswer) string {
	var body strings.Builder
	y := 30
	title := func(text string) {
		fmt.Fprintf(&body, `<text x="10" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", y, xmlText(text))
		y += 10
	}
	legend := func(a, b string) {
		fmt.Fprintf(&body, `<rect x="10" y="%d" width="12" height="%d" fill="#8da0cb"/><text x="26" y="%d">%s</text>`+"\n", y, barHeight, y+7, xmlText(a))
		fmt.Fprintf(&body, `<rect x="220" y="%d" width="12" height="%d" fill="#fc8d62"/><text x="236" y="%d">%s</text>`+"\n", y, barHeight, y+7, xmlText(b))
		y += 22
	}
	pair := func(label string, est, obs, scale float64, note string) {
		fmt.Fprintf(&body, `<text x="10" y="%d">%s</text>`+"\n", y+10, xmlText(label))
		fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="#8da0cb"><title>est_time %.0fs</title></rect>`+"\n", labelWidth, y, width(est, scale), barHeight, est)
		fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="#fc8d62"><title>observed %.0fs</title></rect>`+"\n", labelWidth, y+barHeight+1, width(obs, scale), barHeight, obs)
		fmt.Fprintf(&body, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(labelWidth)+width(max(est, obs), scale)+6, y+11, xmlText(note))
		y += rowHeight
	}
	title(fmt.Sprintf("est_time against the observed p90, per test (%s to %s)", slow.From.Format("2006-01-02"), slow.Before.Format("2006-01-02")))
	legend("est_time (registered)", "observed p90")
	scale := 1.0
	for _, t := range slow.Tests {
		scale = max(scale, finite(t.EstTime), finite(t.P90))
	}
	if len(slow.Tests) == 0 {
		fmt.Fprintf(&body, `<text x="10" y="%d">no test has the 3 samples a p90 needs</text>`+"\n", y+10)
		y += rowHeight
	}
	for _, t := range slow.Tests {
		est := "no registration"
		if t.Registered {
			est = fmt.Sprintf("%.0fs", t.EstTime)
		}
		pair(t.TestPath+" ("+t.Suite+")", t.EstTime, t.P90, scale, fmt.Sprintf("%s / p90 %.0fs", est, t.P90))
	}
	for _, sh := range shards {
		y += 16
		title(fmt.Sprintf("%s: observed load against the estimate, per shard (timeout %d min)", sh.Stage, sh.TimeoutS/60))
		legend("est_time total", "observed (unobserved files at est_time)")
		scale := max(1, float64(sh.TimeoutS))
		for _, s := range sh.Shards {
			scale = max(scale, finite(s.Today), finite(s.Observed))
		}
		top := y
		for _, s := range sh.Shards {
			pair(fmt.Sprintf("shard %d/%d (%s, %d unobserved)", s.Shard+1, len(sh.Shards), plural.N(len(s.Files), "file"), s.Unobserved), s.Today, s.Observed, scale,
				fmt.Sprintf("%.0fs / %.0fs", s.Today, s.Observed))
		}
		if sh.TimeoutS > 0 {
			x := float64(labelWidth) + width(float64(sh.TimeoutS), scale)
			fmt.Fprintf(&body, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d62728" stroke-dasharray="4 3"><title>timeout %ds</title></line>`+"\n", x, top-4, x, y, sh.TimeoutS)
		}
	}
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", chartWidth, y+20, chartWidth, y+20) +
		`<rect width="100%" height="100%" fill="white"/>` + "\n" + body.String() + "</svg>\n"
}

// width is a bar's length for v seconds on a scale whose top is scale.
func width(v, scale float64) float64 { return finite(v) / scale * barArea }

// finite is v, or 0 for a value no bar can draw (negative, NaN, Infinity).
func finite(v float64) float64 {
	if !(v >= 0) || math.IsInf(v, 1) {
		return 0
	}
	return v
}

// xmlText is a text of the chart, which names the store's tests and
// suites: one printable line (printable.Line: no control character, which
// XML may not hold), escaped for XML.
func xmlText(s string) string { return html.EscapeString(printable.Line(s)) }
