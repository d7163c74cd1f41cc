package graph

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Host is one host's GPUs as --gpus gives them.
type Host struct {
	// StandIn: --gpus none, an engine without GPUs running stand-in images.
	// Every GPU shard is then satisfiable with no device: the stand-in tests
	// use none, so shards are bounded only by max-parallel.
	StandIn bool
	// Devices are the host's device ids, in the order given. With StandIn
	// (--gpus none:0-3) they are handed out as on a real host, as the
	// visible-devices variable only, and the engine gives no device: the
	// scheduling of a GPU host, tested on an engine without GPUs.
	Devices []string
}

// maxHostGPUs bounds a device list.
const maxHostGPUs = 256

// ParseHost reads a --gpus value: none, all (detected, the host's device
// count), a range 0-7, ids 0,1,2,3, or a mix (0-3,6).
func ParseHost(s string, detected func() (int, error)) (Host, error) {
	if ids, ok := strings.CutPrefix(s, "none:"); ok {
		// none:all has nothing to count: only ids say the host's shape.
		h, err := ParseHost(ids, func() (int, error) { return 0, errors.New("no device ids") })
		if err != nil || h.StandIn {
			return Host{}, fmt.Errorf("--gpus %q: after none: give device ids such as 0,1,2,3 or a range such as 0-3 (stand-ins scheduled as on a host with those GPUs)", s)
		}
		h.StandIn = true
		return h, nil
	}
	switch s {
	case "none":
		return Host{StandIn: true}, nil
	case "", "all":
		n, err := detected()
		if err != nil {
			return Host{}, fmt.Errorf("--gpus all: %w; give the devices (0-7, 0,1,2,3) or none for stand-ins", err)
		}
		if n == 0 {
			return Host{}, fmt.Errorf("--gpus all: this host shows no GPU; give the devices (0-7, 0,1,2,3), or none to run the GPU stages on stand-ins")
		}
		return ParseHost(fmt.Sprintf("0-%d", n-1), nil)
	}
	var h Host
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, errA := strconv.Atoi(lo)
		b := a
		var errB error
		if isRange {
			b, errB = strconv.Atoi(hi)
		}
		if errA != nil || errB != nil || a < 0 || b < a || lo != strconv.Itoa(a) || (isRange && hi != strconv.Itoa(b)) {
			return Host{}, fmt.Errorf("--gpus %q: %q is not a device id or range; give all, none, ids such as 0,1,2,3 or a range such as 0-7", s, part)
		}
		for d := a; d <= b; d++ {
			id := strconv.Itoa(d)
			if seen[id] {
				return Host{}, fmt.Errorf("--gpus %q names device %s twice", s, id)
			}
			if len(h.Devices) >= maxHostGPUs {
				return Host{}, fmt.Errorf("--gpus %q names more than %d devices", s, maxHostGPUs)
			}
			seen[id] = true
			h.Devices = append(h.Devices, id)
		}
	}
	return h, nil
}

// String is the host as --gpus writes it.
func (h Host) String() string {
	if h.StandIn && len(h.Devices) == 0 {
		return "none"
	}
	if h.StandIn {
		return "none:" + strings.Join(h.Devices, ",")
	}
	return strings.Join(h.Devices, ",")
}

// pool hands out disjoint device sets.
type pool struct {
	host Host
	busy map[string]bool
}

func newPool(h Host) *pool { return &pool{host: h, busy: map[string]bool{}} }

// fits reports whether n GPUs could ever be given on this host.
func (p *pool) fits(n int) bool { return p.unbounded() || n <= len(p.host.Devices) }

// unbounded is a stand-in host without device ids: any shard fits, and
// none gets a device.
func (p *pool) unbounded() bool { return p.host.StandIn && len(p.host.Devices) == 0 }

// take gives the n lowest free devices, or ok false when too few are free.
// A stand-in host gives none and always succeeds.
func (p *pool) take(n int) (devs []string, ok bool) {
	if n == 0 || p.unbounded() {
		return nil, true
	}
	for _, d := range p.host.Devices {
		if !p.busy[d] {
			devs = append(devs, d)
			if len(devs) == n {
				break
			}
		}
	}
	if len(devs) < n {
		return nil, false
	}
	for _, d := range devs {
		p.busy[d] = true
	}
	return devs, true
}

func (p *pool) give(devs []string) {
	for _, d := range devs {
		delete(p.busy, d)
	}
}
