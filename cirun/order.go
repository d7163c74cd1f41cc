package cirun

import (
	"cmp"
	"slices"
)

// ready are the units that could start now, in the order the scheduler
// tries them (issue 42): first the shards of jobs that other stage jobs
// wait for (stage-a-cpu before the GPU stages it gates), then the longest
// expected first (Options.Estimate), then the graph's order; each unit
// that fits starts, so smaller shards still fill devices a larger one
// leaves free. Longest first is the longest-processing-time rule: the
// shards that end last are short ones, so the host's devices end nearly
// together and the span stays near its lower bound (BenchmarkOrder
// measures it against the graph's order and the largest GPU-seconds
// first). A matrix with a max-parallel below its size offers only its
// next shards, in matrix order, as GitHub starts them. A dry run
// (Inline), or a run with no estimate, keeps the graph's order.
func (s *scheduler) ready() []*unitRun {
	var out []*unitRun
	for _, nr := range s.nodes {
		if nr.state != Running {
			continue
		}
		room := -1
		if nr.parallel > 0 && nr.parallel < len(nr.units) {
			room = nr.parallel - nr.runningUnits()
		}
		for _, ur := range nr.units {
			if ur.state != Queued {
				continue
			}
			if room == 0 {
				break
			}
			room--
			out = append(out, ur)
		}
	}
	if s.opt.Inline || s.opt.Estimate == nil {
		return out
	}
	type key struct {
		gate    bool
		seconds float64
		index   int
	}
	keys := map[*unitRun]key{}
	for i, ur := range out {
		keys[ur] = key{gate: s.gates(ur.node), seconds: s.estimate(ur), index: i}
	}
	slices.SortStableFunc(out, func(a, b *unitRun) int {
		ka, kb := keys[a], keys[b]
		if ka.gate != kb.gate {
			if ka.gate {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(kb.seconds, ka.seconds), cmp.Compare(ka.index, kb.index))
	})
	return out
}

// estimate is a unit's expected seconds, asked of Options.Estimate once.
func (s *scheduler) estimate(ur *unitRun) float64 {
	if e, ok := s.est[ur]; ok {
		return e
	}
	e := max(s.opt.Estimate(&ur.u), 0)
	s.est[ur] = e
	return e
}

// gates says whether a stage job waits for the node (transitively): its
// shards hold up other work, so they go first.
func (s *scheduler) gates(nr *nodeRun) bool {
	if g, ok := s.gate[nr]; ok {
		return g
	}
	g := nr.n.Kind == KindStage && s.anyDependentStage(nr, map[*nodeRun]bool{})
	s.gate[nr] = g
	return g
}

// nextEnd is the what-if's next unit to end: the clock moves to its end
// (the first launched of those ending together).
func (s *scheduler) nextEnd() *unitRun {
	best := 0
	for i, ur := range s.pending {
		if s.ends[ur].Before(s.ends[s.pending[best]]) {
			best = i
		}
	}
	ur := s.pending[best]
	s.pending = slices.Delete(s.pending, best, best+1)
	s.clock = s.ends[ur]
	delete(s.ends, ur)
	return ur
}
