package cirun

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Host is one host's GPUs as --gpus (or a --hosts file's entry) gives
// them: their ids and, where known, their model (rules §14).
type Host struct {
	// Name names a host of a --hosts file ("" for the one host --gpus
	// gives).
	Name string
	// Engine is the address of the host's Dagger engine ("" for the local
	// one).
	Engine string
	// StandIn: --gpus none, an engine without GPUs running stand-in images.
	// Every GPU shard is then satisfiable with no device: the stand-in tests
	// use none, so shards are bounded only by max-parallel.
	StandIn bool
	// Devices are the host's device ids, in the order given. With StandIn
	// (--gpus none:0-3) they are handed out as on a real host, as the
	// visible-devices variable only, and the engine gives no device: the
	// scheduling of a GPU host, tested on an engine without GPUs.
	Devices []string
	// Models are the runner labels of the devices' models (h200, mi350),
	// Models[i] that of Devices[i]; nil when the devices were given as bare
	// ids, whose kinds are then not checked.
	Models []string
	// Runners split the host's GPUs as Miles' runners do (scitix-73: 4gpu on
	// 0-3, 2gpu on 4,5 and on 6,7): a job runs on a runner that carries
	// every label of its runs_on, on all of the runner's devices. None: a
	// shard takes the free devices of its kind it needs.
	Runners []Runner
	// NoCPU keeps CPU shards off the host.
	NoCPU bool
}

// Runner is a share of a host's GPUs that one job at a time runs on.
type Runner struct {
	Name    string
	Labels  []string
	Devices []string
}

// maxHostGPUs bounds a device list.
const maxHostGPUs = 256

// modelLabel is how a kind is written before its ids: h200, mi350, b200.
var modelLabel = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,31}$`)

// Detected is one device --gpus all found: its id and its model's runner
// label ("" when its name names none).
type Detected struct {
	ID, Model string
}

// ParseHost reads a --gpus value: none; all (what detect finds); ids 0-7,
// 0,1,2,3 or a mix (0-3,6); ids of a kind, h200:0-7 or h200:0-3,h100:4-7
// (an id without a kind has the kind before it); or none: before ids,
// stand-ins scheduled as on a host with those GPUs.
func ParseHost(s string, detect func() ([]Detected, error)) (Host, error) {
	if ids, ok := strings.CutPrefix(s, "none:"); ok {
		h, err := parseIDs(s, ids)
		if err != nil {
			return Host{}, fmt.Errorf("--gpus %q: after none: give device ids such as 0,1,2,3, a range such as 0-3, or ids of a kind such as h200:0-3 (stand-ins scheduled as on a host with those GPUs)", s)
		}
		h.StandIn = true
		return h, nil
	}
	switch s {
	case "none":
		return Host{StandIn: true}, nil
	case "", "all":
		found, err := detect()
		if err != nil {
			return Host{}, fmt.Errorf("--gpus all: %w; give the devices (h200:0-7, 0-7), or none for stand-ins", err)
		}
		if len(found) == 0 {
			return Host{}, fmt.Errorf("--gpus all: this host shows no GPU; give the devices (h200:0-7, 0-7), or none to run the GPU stages on stand-ins")
		}
		if len(found) > maxHostGPUs {
			return Host{}, fmt.Errorf("--gpus all: this host shows %d GPUs, more than the %d miles-ci schedules", len(found), maxHostGPUs)
		}
		var h Host
		kinded := true
		for _, d := range found {
			h.Devices = append(h.Devices, d.ID)
			h.Models = append(h.Models, d.Model)
			kinded = kinded && d.Model != ""
		}
		if !kinded {
			h.Models = nil // a device of no known model: its kinds are not checked
		}
		return h, nil
	}
	return parseIDs(s, s)
}

// parseIDs reads the ids of --gpus value whole, each with its kind or none.
func parseIDs(whole, s string) (Host, error) {
	var h Host
	seen := map[string]bool{}
	kind, kinds := "", 0
	for _, part := range strings.Split(s, ",") {
		if k, ids, ok := strings.Cut(part, ":"); ok {
			k = strings.ToLower(k)
			if !modelLabel.MatchString(k) || k == "none" || k == "all" {
				return Host{}, fmt.Errorf("--gpus %q: %q is not a GPU model; write the model as its runner label, such as h200:0-7 or mi350:0-3", whole, k)
			}
			kind, part = k, ids
			kinds++
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, errA := strconv.Atoi(lo)
		b := a
		var errB error
		if isRange {
			b, errB = strconv.Atoi(hi)
		}
		if errA != nil || errB != nil || a < 0 || b < a || lo != strconv.Itoa(a) || (isRange && hi != strconv.Itoa(b)) {
			return Host{}, fmt.Errorf("--gpus %q: %q is not a device id or range; give all, none, ids such as 0,1,2,3, a range such as 0-7, or ids of a kind such as h200:0-7", whole, part)
		}
		for d := a; d <= b; d++ {
			id := strconv.Itoa(d)
			if seen[id] {
				return Host{}, fmt.Errorf("--gpus %q names device %s twice", whole, id)
			}
			if len(h.Devices) >= maxHostGPUs {
				return Host{}, fmt.Errorf("--gpus %q names more than %d devices", whole, maxHostGPUs)
			}
			seen[id] = true
			h.Devices = append(h.Devices, id)
			if kind != "" {
				h.Models = append(h.Models, kind)
			}
		}
	}
	if kinds > 0 && len(h.Models) != len(h.Devices) {
		return Host{}, fmt.Errorf("--gpus %q gives a kind to some devices only; give one to every device (h200:0-3,h100:4-7) or to none", whole)
	}
	return h, nil
}

// Kinded says whether the host's devices carry their models: only then does
// a shard run on devices of its stage's kind alone.
func (h Host) Kinded() bool { return len(h.Models) > 0 }

// unbounded is a stand-in host without device ids: any shard fits, and
// none gets a device.
func (h Host) unbounded() bool { return h.StandIn && len(h.Devices) == 0 }

// String is the host as --gpus writes it: ids of a kind in ranges
// (h200:0-3,h100:4-7), bare ids one by one (0,1,2,3).
func (h Host) String() string {
	if h.StandIn && len(h.Devices) == 0 {
		return "none"
	}
	s := strings.Join(h.Devices, ",")
	if h.Kinded() {
		s = kindRanges(h.Devices, h.Models)
	}
	if h.StandIn {
		return "none:" + s
	}
	return s
}

// kindRanges writes devices by kind, consecutive ids as a range.
func kindRanges(devs, models []string) string {
	var parts []string
	for i := 0; i < len(devs); {
		j := i
		for j+1 < len(devs) && models[j+1] == models[i] && consecutive(devs[j], devs[j+1]) {
			j++
		}
		p := devs[i]
		if j > i {
			p += "-" + devs[j]
		}
		if i == 0 || models[i] != models[i-1] {
			p = models[i] + ":" + p
		}
		parts = append(parts, p)
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func consecutive(a, b string) bool {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	return errA == nil && errB == nil && y == x+1
}

// Have says what the host has, as a not-run reason names it: "8 H200",
// "4 H200, 4 H100", or a count of devices whose kind is not known.
func (h Host) Have() string {
	if !h.Kinded() {
		return strconv.Itoa(len(h.Devices))
	}
	var order []string
	count := map[string]int{}
	for _, m := range h.Models {
		if count[m] == 0 {
			order = append(order, m)
		}
		count[m]++
	}
	var parts []string
	for _, m := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[m], strings.ToUpper(m)))
	}
	return strings.Join(parts, ", ")
}

// modelOf is the model of a device ("" when not known).
func (h Host) modelOf(dev string) string {
	if i := slices.Index(h.Devices, dev); i >= 0 && i < len(h.Models) {
		return h.Models[i]
	}
	return ""
}

// Substitute lets a stage of one GPU model run on devices of another
// (--substitute h100=h200).
type Substitute struct {
	From, To string
}

// ParseSubstitute reads a --substitute value FROM=TO.
func ParseSubstitute(s string) (Substitute, error) {
	from, to, ok := strings.Cut(strings.ToLower(s), "=")
	if !ok || !modelLabel.MatchString(from) || !modelLabel.MatchString(to) || from == to {
		return Substitute{}, fmt.Errorf("--substitute %q: give MODEL=MODEL, the stage's GPU model and the one to run it on, such as h100=h200", s)
	}
	return Substitute{From: from, To: to}, nil
}

// String is the substitution as --substitute writes it.
func (s Substitute) String() string { return s.From + "=" + s.To }
