package htmlpage

import (
	"fmt"
	"maps"
	"slices"

	"github.com/radixark/miles-ci/cirun"
)

// The drawing's box sizes, in pixels.
const (
	boxW, boxH   = 230, 40
	gapX, gapY   = 60, 14
	marginX      = 10
	marginY      = 10
	maxLabelRune = 34
)

// svgGraph is the job graph drawn in layers: a job's column is one past
// its furthest need, so every edge goes left to right.
type svgGraph struct {
	Width, Height int
	Boxes         []svgBox
	Edges         []svgEdge
}

type svgBox struct {
	X, Y, TextX, TextY, StateY int
	Label, State, Class        string
}

type svgEdge struct{ X1, Y1, X2, Y2 int }

// layout places one box per job (a stage's shards in one box, coloured
// by its worst shard) in the order the report lists them.
func layout(r *cirun.Report, m func(string) string) *svgGraph {
	var keys []string
	states := map[string][]cirun.State{}
	needs := map[string][]string{}
	for _, j := range r.Jobs {
		if _, ok := states[j.Key]; !ok {
			keys = append(keys, j.Key)
			needs[j.Key] = j.Needs
		}
		states[j.Key] = append(states[j.Key], j.State)
	}
	if len(keys) == 0 {
		return nil
	}
	col := map[string]int{}
	var colOf func(k string, seen map[string]bool) int
	colOf = func(k string, seen map[string]bool) int {
		if c, ok := col[k]; ok {
			return c
		}
		if seen[k] { // a cycle cannot come from a workflow; drawn flat
			return 0
		}
		seen[k] = true
		c := 0
		for _, n := range needs[k] {
			if _, known := states[n]; known {
				c = max(c, colOf(n, seen)+1)
			}
		}
		col[k] = c
		return c
	}
	rows := map[int]int{}
	pos := map[string][2]int{}
	g := &svgGraph{}
	for _, k := range keys {
		c := colOf(k, map[string]bool{})
		x, y := marginX+c*(boxW+gapX), marginY+rows[c]*(boxH+gapY)
		rows[c]++
		pos[k] = [2]int{x, y}
		st := worst(states[k])
		label := k
		if n := len(states[k]); n > 1 {
			label += fmt.Sprintf(" ×%d", n)
		}
		g.Boxes = append(g.Boxes, svgBox{X: x, Y: y, TextX: x + 8, TextY: y + 16, StateY: y + 32,
			Label: m(cut(label, maxLabelRune)), State: string(st), Class: stateClass(st)})
		g.Width = max(g.Width, x+boxW+marginX)
		g.Height = max(g.Height, y+boxH+marginY)
	}
	for _, k := range keys {
		for _, n := range needs[k] {
			from, ok := pos[n]
			if !ok {
				continue
			}
			to := pos[k]
			g.Edges = append(g.Edges, svgEdge{X1: from[0] + boxW, Y1: from[1] + boxH/2, X2: to[0], Y2: to[1] + boxH/2})
		}
	}
	return g
}

// worst is a job's state over its shards: failed, not-run or cancelled
// first, else the first shard's.
func worst(states []cirun.State) cirun.State {
	for _, s := range []cirun.State{cirun.Failed, cirun.NotRun, cirun.Cancelled} {
		if slices.Contains(states, s) {
			return s
		}
	}
	return states[0]
}

// cut shortens a label to n runes, marking the cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// sortedKeys are a map's keys in order.
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
