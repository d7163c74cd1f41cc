package cirun

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/hostgpu"
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
	Devices device.Set
	// Models are the runner labels of the devices' models (h200, mi350),
	// Models[i] that of Devices[i]; nil when the devices were given as bare
	// ids, whose kinds are then not checked.
	Models []device.Model
	// Detected says the devices and models were read from this machine's
	// GPUs (--gpus all), not given by a person: their models are the
	// GPUs' own, so they need not be models a stage runs on.
	Detected bool
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
	Devices device.Set
}

// maxHostGPUs bounds a device list.
const maxHostGPUs = device.MaxSet

// Detect reads this machine's GPUs for --gpus all (nvidia-smi, else
// rocm-smi): each with its id and, where its name names one, its model.
type Detect func() ([]hostgpu.Device, error)

// GPUs is a --gpus value as read, before this machine is looked at: All
// (all, or no value) is every GPU it shows (DetectedHost), else Host is the
// host the value names.
type GPUs struct {
	All  bool
	Host Host
}

// ParseGPUs reads a --gpus value: none; all; ids 0-7, 0,1,2,3 or a mix
// (0-3,6); ids of a kind, h200:0-7 or h200:0-3,h100:4-7 (an id without a
// kind has the kind before it); or none: before ids, stand-ins scheduled as
// on a host with those GPUs. Ids are read by the one grammar of package
// device, normalised (00 is 0); one named twice is an error that names it.
func ParseGPUs(s string) (GPUs, error) {
	if ids, ok := strings.CutPrefix(s, "none:"); ok {
		h, err := parseIDs(s, ids)
		if err != nil {
			return GPUs{}, fmt.Errorf("--gpus %q: after none: give device ids such as 0,1,2,3, a range such as 0-3, or ids of a kind such as h200:0-3 (stand-ins scheduled as on a host with those GPUs)", s)
		}
		h.StandIn = true
		return GPUs{Host: h}, nil
	}
	switch s {
	case "none":
		return GPUs{Host: Host{StandIn: true}}, nil
	case "", "all":
		return GPUs{All: true}, nil
	}
	h, err := parseIDs(s, s)
	return GPUs{Host: h}, err
}

// DetectedHost is the host of --gpus all: the GPUs Detect found on this
// machine (err: why it could not look), each with its model where its name
// gives one.
func DetectedHost(found []hostgpu.Device, err error) (Host, error) {
	if err != nil {
		return Host{}, fmt.Errorf("--gpus all: %w; give the devices (h200:0-7, 0-7), or none for stand-ins", err)
	}
	if len(found) == 0 {
		return Host{}, fmt.Errorf("--gpus all: this host shows no GPU; give the devices (h200:0-7, 0-7), or none to run the GPU stages on stand-ins")
	}
	if len(found) > maxHostGPUs {
		return Host{}, fmt.Errorf("--gpus all: this host shows %d GPUs, more than the %d miles-ci schedules", len(found), maxHostGPUs)
	}
	h := Host{Detected: true}
	kinded := true
	for _, d := range found {
		var err error
		if h.Devices, err = h.Devices.With(d.ID); err != nil {
			return Host{}, fmt.Errorf("--gpus all: %w", err)
		}
		h.Models = append(h.Models, d.Model)
		kinded = kinded && d.Model != ""
	}
	if !kinded {
		h.Models = nil // a device of no known model: its kinds are not checked
	}
	return h, nil
}

// ParseHost reads a --gpus value (ParseGPUs), with all the GPUs detect
// finds on this machine.
func ParseHost(s string, detect Detect) (Host, error) {
	g, err := ParseGPUs(s)
	if err != nil || !g.All {
		return g.Host, err
	}
	return DetectedHost(detect())
}

// parseIDs reads the ids of --gpus value whole, each with its kind or none.
func parseIDs(whole, s string) (Host, error) {
	ds, err := device.ParseList(s)
	if ne := (*device.NotIDError)(nil); errors.As(err, &ne) {
		return Host{}, fmt.Errorf("--gpus %q: %w; give all, none, ids such as 0,1,2,3, a range such as 0-7, or ids of a kind such as h200:0-7", whole, err)
	}
	if err != nil {
		return Host{}, fmt.Errorf("--gpus %q: %w", whole, err)
	}
	h := Host{Devices: device.IDs(ds)}
	if ds[0].Model != "" {
		for _, d := range ds {
			h.Models = append(h.Models, d.Model)
		}
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
	s := h.Devices.String()
	if h.Kinded() {
		s = kindRanges(h.Devices, h.Models)
	}
	if h.StandIn {
		return "none:" + s
	}
	return s
}

// kindRanges writes devices by kind, consecutive ids as a range.
func kindRanges(devs device.Set, models []device.Model) string {
	var parts []string
	for i := 0; i < len(devs); {
		j := i
		for j+1 < len(devs) && models[j+1] == models[i] && device.Consecutive(devs[j], devs[j+1]) {
			j++
		}
		p := string(devs[i])
		if j > i {
			p += "-" + string(devs[j])
		}
		if i == 0 || models[i] != models[i-1] {
			p = string(models[i]) + ":" + p
		}
		parts = append(parts, p)
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Have says what the host has, as a not-run reason names it: "8 H200",
// "4 H200, 4 H100", or a count of devices whose kind is not known.
func (h Host) Have() string {
	if !h.Kinded() {
		return strconv.Itoa(len(h.Devices))
	}
	var order []device.Model
	count := map[device.Model]int{}
	for _, m := range h.Models {
		if count[m] == 0 {
			order = append(order, m)
		}
		count[m]++
	}
	var parts []string
	for _, m := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[m], m.Upper()))
	}
	return strings.Join(parts, ", ")
}

// modelOf is the model of a device ("" when not known).
func (h Host) modelOf(dev device.ID) device.Model {
	if i := slices.Index(h.Devices, dev); i >= 0 && i < len(h.Models) {
		return h.Models[i]
	}
	return ""
}

// Substitute lets a stage of one GPU model run on devices of another
// (--substitute h100=h200).
type Substitute struct {
	From, To device.Model
}

// ParseSubstitute reads a --substitute value FROM=TO. Whether miles-ci
// knows both models, and that they are of one vendor, is the run's check
// (its checkout's stages name models too).
func ParseSubstitute(s string) (Substitute, error) {
	from, to, ok := strings.Cut(s, "=")
	f, errF := device.ParseModel(from)
	t, errT := device.ParseModel(to)
	if !ok || errF != nil || errT != nil || f == t {
		return Substitute{}, fmt.Errorf("--substitute %q: give MODEL=MODEL, the stage's GPU model and the one to run it on, such as h100=h200", s)
	}
	return Substitute{From: f, To: t}, nil
}

// String is the substitution as --substitute writes it.
func (s Substitute) String() string { return string(s.From) + "=" + string(s.To) }
