package htmlpage

import (
	"fmt"
	"math"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/timeline"
)

// The timeline's sizes, in pixels.
const (
	laneLabelW = 170
	chartW     = 760
	laneH      = 18
	axisH      = 22
	barPad     = 2
	charW      = 7 // an average character of the bar labels, to fit them
)

// svgTimeline is where the run's time went: one lane per host and device
// (a host's CPU shards in lanes of their own, miles-ci's own jobs last),
// each task a bar from its start to its end in its state's colour, and
// the lower bound as a line.
type svgTimeline struct {
	Width, Height int
	Figures       string
	Lanes         []svgLane
	Ticks         []svgTick
	// BoundX is the lower bound's line (0: none).
	BoundX, BoundY2 int
	AxisY           int
}

type svgLane struct {
	Y, TextY int
	Label    string
	Bars     []svgBar
}

type svgBar struct {
	X, Y, W, H, TextX, TextY int
	Class, Label, Title      string
}

type svgTick struct {
	X, Y  int
	Label string
}

// timelineOf draws the run's timeline, nil for a run with none (a dry run).
func timelineOf(r *cirun.Report, m func(string) string) *svgTimeline {
	if r.Timeline == nil {
		return nil
	}
	tasks := r.Tasks()
	if len(tasks) == 0 {
		return nil
	}
	f := *r.Timeline
	end := max(f.Span, f.LowerBound, 1)
	scale := float64(chartW) / end
	x := func(s float64) int { return laneLabelW + int(math.Round(s*scale)) }
	tl := &svgTimeline{Figures: m(f.Sentence()), AxisY: axisH - 6}
	y := axisH
	for _, l := range timeline.Lanes(tasks, f.Fleet, r.Shard) {
		label := l.Name
		if l.Host != "" {
			label = l.Host + " " + l.Name
		}
		lane := svgLane{Y: y, TextY: y + laneH - 5, Label: m(cut(label, 24))}
		for _, t := range l.Bars {
			b := svgBar{X: x(t.Start), Y: y + barPad, H: laneH - 2*barPad, Class: stateClass(cirun.State(t.State))}
			b.W = max(x(t.End())-b.X, 1)
			b.TextX, b.TextY = b.X+3, y+laneH-5
			if n := (b.W - 6) / charW; n >= 4 {
				b.Label = m(cut(t.ID, n))
			}
			b.Title = m(fmt.Sprintf("%s: %s, %.1f s to %.1f s (%.1f s)", t.ID, t.State, t.Start, t.End(), t.Seconds))
			lane.Bars = append(lane.Bars, b)
		}
		tl.Lanes = append(tl.Lanes, lane)
		y += laneH
	}
	step := tickStep(end)
	for s := 0.0; s <= end+1e-9; s += step {
		tl.Ticks = append(tl.Ticks, svgTick{X: x(s), Y: y, Label: fmt.Sprintf("%g s", s)})
	}
	if f.LowerBound > 0 {
		tl.BoundX, tl.BoundY2 = x(f.LowerBound), y
	}
	tl.Width, tl.Height = laneLabelW+chartW+40, y+8
	return tl
}

// tickStep is the axis's step: 1, 2 or 5 times a power of ten, for at most
// ten ticks.
func tickStep(end float64) float64 {
	for p := 1.0; ; p *= 10 {
		for _, k := range []float64{1, 2, 5} {
			if end/(k*p) <= 10 {
				return k * p
			}
		}
	}
}
