package cirun

import (
	"fmt"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/device"
)

// need is what a shard asks of a host (rules §14): GPUs of its stage's
// model on a runner that carries every label of its runs_on; a CPU shard
// (no GPU) any host that takes CPU work.
type need struct {
	gpus int
	// model is the stage's GPU model ("" when the checkout's kinds are not
	// read, as in tests of the scheduler alone).
	model  device.Model
	runsOn []string
}

// hold is what the placer gave a shard: a host, a runner of it (-1:
// none), the devices it holds, and the substitution that put it there.
type hold struct {
	host        int
	runner      int
	devices     device.Set
	substituted string
	// release lets the host lock's lease go (nil: none taken).
	release func()
}

// kindChoice is one way to run a need: its own model, or a substitute's.
type kindChoice struct {
	model       device.Model
	runsOn      []string
	substituted string
}

// placer hands out hosts and devices: disjoint devices within this
// process (busy), and none another process holds (foreign, filled from the
// host lock's answers until the next retry).
type placer struct {
	hosts   []Host
	subs    []Substitute
	fleet   bool
	busy    []map[device.ID]bool
	foreign []map[device.ID]bool
	down    []string
	cpu     []int
}

func newPlacer(hosts []Host, subs []Substitute, fleet bool) *placer {
	p := &placer{hosts: hosts, subs: subs, fleet: fleet, down: make([]string, len(hosts)), cpu: make([]int, len(hosts))}
	for range hosts {
		p.busy = append(p.busy, map[device.ID]bool{})
		p.foreign = append(p.foreign, map[device.ID]bool{})
	}
	return p
}

// implicitLabels are the labels GitHub gives every self-hosted runner.
var implicitLabels = []string{"self-hosted", "linux", "x64"}

// choices are the kinds a need may run as: its own, then each substitute
// of its model in the order given.
func (p *placer) choices(n need) []kindChoice {
	out := []kindChoice{{model: n.model, runsOn: n.runsOn}}
	for _, s := range p.subs {
		if n.model == "" || s.From != n.model {
			continue
		}
		runsOn := slices.Clone(n.runsOn)
		for i, l := range runsOn {
			if strings.EqualFold(l, string(s.From)) {
				runsOn[i] = string(s.To)
			}
		}
		out = append(out, kindChoice{model: s.To, runsOn: runsOn, substituted: s.String()})
	}
	return out
}

// choice is the kind a need runs as: its own where some host that is up
// could ever hold it, else the first substitute that could.
func (p *placer) choice(n need) (kindChoice, bool) {
	for _, c := range p.choices(n) {
		for h := range p.hosts {
			if p.down[h] == "" && len(p.options(h, n.gpus, c)) > 0 {
				return c, true
			}
		}
	}
	return kindChoice{}, false
}

// fits says whether a need could ever be placed on a host that is up.
func (p *placer) fits(n need) bool {
	_, ok := p.choice(n)
	return ok
}

// option is one set of devices on a host a need could run on.
type option struct {
	runner  int
	devices device.Set // a runner's devices; or the devices of the kind, of which the need takes gpus
}

// options are where on host h a need of gpus devices of kind c could run,
// busy or not.
func (p *placer) options(h, gpus int, c kindChoice) []option {
	host := p.hosts[h]
	if gpus == 0 {
		if host.NoCPU {
			return nil
		}
		return []option{{runner: -1}}
	}
	if host.unbounded() {
		return []option{{runner: -1}}
	}
	if len(host.Runners) > 0 {
		var out []option
		for i, r := range host.Runners {
			labels := slices.Concat(r.Labels, implicitLabels)
			if host.Kinded() {
				for _, d := range r.Devices {
					labels = append(labels, string(host.modelOf(d)))
				}
			}
			if len(r.Devices) >= gpus && p.ofKind(host, r.Devices, c.model) && containsFold(labels, c.runsOn) {
				out = append(out, option{runner: i, devices: r.Devices})
			}
		}
		return out
	}
	var devs device.Set
	for _, d := range host.Devices {
		if p.ofKind(host, device.Set{d}, c.model) {
			devs = append(devs, d)
		}
	}
	if len(devs) < gpus {
		return nil
	}
	return []option{{runner: -1, devices: devs}}
}

// ofKind says whether the devices are of the model: always where the host
// or the stage does not say (kinds not checked).
func (p *placer) ofKind(h Host, devs device.Set, model device.Model) bool {
	if !h.Kinded() || model == "" {
		return true
	}
	for _, d := range devs {
		if h.modelOf(d) != model {
			return false
		}
	}
	return true
}

// containsFold says whether have carries every label of want, as GitHub
// matches runner labels (case-insensitive).
func containsFold(have, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return false
		}
	}
	return true
}

// take places a need now: the first host (in the order given) with free
// devices of its kind, a CPU shard on the host that runs the fewest; ok
// false while everything that fits is busy.
func (p *placer) take(n need) (hold, bool) {
	c, ok := p.choice(n)
	if !ok {
		return hold{}, false
	}
	if n.gpus == 0 {
		best := -1
		for h := range p.hosts {
			if p.down[h] == "" && len(p.options(h, 0, c)) > 0 && (best < 0 || p.cpu[h] < p.cpu[best]) {
				best = h
			}
		}
		if best < 0 {
			return hold{}, false
		}
		p.cpu[best]++
		return hold{host: best, runner: -1}, true
	}
	for h := range p.hosts {
		if p.down[h] != "" {
			continue
		}
		for _, o := range p.options(h, n.gpus, c) {
			if p.hosts[h].unbounded() {
				return hold{host: h, runner: -1, substituted: c.substituted}, true
			}
			free := p.free(h, o)
			if o.runner >= 0 && len(free) < len(o.devices) || len(free) < n.gpus {
				continue
			}
			if o.runner < 0 {
				free = free[:n.gpus]
			}
			for _, d := range free {
				p.busy[h][d] = true
			}
			return hold{host: h, runner: o.runner, devices: free, substituted: c.substituted}, true
		}
	}
	return hold{}, false
}

// free are an option's devices neither this process nor another holds.
func (p *placer) free(h int, o option) device.Set {
	var out device.Set
	for _, d := range o.devices {
		if !p.busy[h][d] && !p.foreign[h][d] {
			out = append(out, d)
		}
	}
	return out
}

// give frees a placement's devices.
func (p *placer) give(pl hold, gpus int) {
	if gpus == 0 && pl.host < len(p.cpu) {
		p.cpu[pl.host]--
	}
	for _, d := range pl.devices {
		delete(p.busy[pl.host], d)
	}
}

// heldElsewhere marks devices another process holds until the next retry.
func (p *placer) heldElsewhere(h int, devs device.Set) {
	for _, d := range devs {
		p.foreign[h][d] = true
	}
}

// retry forgets what other processes held: the next placement asks again.
func (p *placer) retry() {
	for _, f := range p.foreign {
		clear(f)
	}
}

// waitsElsewhere says whether some device is held by another process.
func (p *placer) waitsElsewhere() bool {
	return slices.ContainsFunc(p.foreign, func(f map[device.ID]bool) bool { return len(f) > 0 })
}

// why says why a need cannot be placed, naming what it needs and what the
// hosts have: "needs 4 MI350 GPUs; this host has 8 H200 (--gpus h200:0-7)".
func (p *placer) why(n need) string {
	want := fmt.Sprintf("%d GPUs", n.gpus)
	if n.gpus == 0 {
		want = "a host that takes CPU work"
	} else if n.model != "" && slices.ContainsFunc(p.hosts, Host.Kinded) {
		want = fmt.Sprintf("%d %s GPUs", n.gpus, n.model.Upper())
	}
	if slices.ContainsFunc(p.hosts, func(h Host) bool { return len(h.Runners) > 0 }) && n.gpus > 0 {
		want += fmt.Sprintf(" on a runner labelled %s", strings.Join(n.runsOn, ","))
	}
	if subs := p.choices(n)[1:]; len(subs) > 0 {
		var alt []string
		for _, c := range subs {
			alt = append(alt, c.model.Upper())
		}
		want += " (or " + strings.Join(alt, ", ") + " by --substitute)"
	}
	if !p.fleet {
		return fmt.Sprintf("needs %s; this host has %s (--gpus %s)", want, p.hosts[0].Have(), p.hosts[0])
	}
	var have []string
	for i, h := range p.hosts {
		d := h.Name + ": " + h.Have()
		if h.unbounded() {
			d = h.Name + ": stand-ins"
		}
		if len(h.Runners) > 0 {
			var rs []string
			for _, r := range h.Runners {
				rs = append(rs, fmt.Sprintf("%s [%s] on %s", r.Name, strings.Join(r.Labels, ","), r.Devices))
			}
			d += " (runners " + strings.Join(rs, "; ") + ")"
		}
		if h.NoCPU {
			d += " (no CPU work)"
		}
		if p.down[i] != "" {
			d += " (down: " + p.down[i] + ")"
		}
		have = append(have, d)
	}
	return fmt.Sprintf("needs %s; the hosts have %s", want, strings.Join(have, "; "))
}
