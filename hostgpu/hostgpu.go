// Package hostgpu reads a host's GPUs from what its vendor tools print:
// nvidia-smi's CSV query and its -L list, and rocm-smi's product names. It
// runs nothing (hostgpu/detect runs the tools and hands their output
// here), and it reads a GPU's model from its name only, never from a count.
package hostgpu

import (
	"fmt"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/device"
)

// Device is one GPU of a host as its vendor tool names it.
type Device struct {
	ID     device.ID     // the index the vendor tool prints (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES id)
	Vendor device.Vendor // nvidia or amd
	Model  device.Model  // the runner label of its model: "h100", "h200", "b200", "mi350", ... ("" when the name names none)
	Name   string        // the vendor's own name, e.g. "NVIDIA H200", "NVIDIA H100 80GB HBM3", "AMD Instinct MI355X"
	UUID   string        // nvidia's GPU-... uuid, or amd's unique id when shown
}

// The vendors a Device names.
const (
	NVIDIA = device.NVIDIA
	AMD    = device.AMD
)

// Bounds on what a parser reads: a tool's output past MaxInput bytes, or
// listing more than MaxDevices GPUs, is refused rather than read.
const (
	MaxInput   = 1 << 20
	MaxDevices = 256
)

// lines splits a tool's output into lines after checking its size; what
// names the tool in errors.
func lines(out []byte, what string) ([]string, error) {
	if len(out) > MaxInput {
		return nil, fmt.Errorf("%s: output of %d bytes is over the %d bytes read; run it by hand to see why", what, len(out), MaxInput)
	}
	s := strings.ReplaceAll(string(out), "\r\n", "\n")
	return strings.Split(s, "\n"), nil
}

// noDevices is the line nvidia-smi prints (with exit status 6) on a host
// whose driver sees no GPU.
const noDevices = "No devices were found"

// ParseNvidiaQuery reads `nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader`:
// one line per GPU, its fields joined by ", " ("0, NVIDIA H200, GPU-769e...").
func ParseNvidiaQuery(out []byte) ([]Device, error) {
	const what = "nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader"
	ls, err := lines(out, what)
	if err != nil {
		return nil, err
	}
	var ds devices
	for n, line := range ls {
		line = strings.TrimSpace(line)
		if line == "" || line == noDevices {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) != 3 {
			return nil, fmt.Errorf("%s: line %d %q is not index, name, uuid", what, n+1, clip(line))
		}
		id, name, uuid := strings.TrimSpace(f[0]), strings.TrimSpace(f[1]), strings.TrimSpace(f[2])
		if err := ds.add(what, n+1, id, Device{Vendor: NVIDIA, Name: name, UUID: uuid}); err != nil {
			return nil, err
		}
	}
	return ds.list, nil
}

// ParseNvidiaList reads `nvidia-smi -L`: "GPU 0: NVIDIA H200 (UUID: GPU-...)"
// per GPU. The indented MIG lines under a GPU are instances of it, not GPUs
// miles-ci hands out, and are skipped.
func ParseNvidiaList(out []byte) ([]Device, error) {
	const what = "nvidia-smi -L"
	ls, err := lines(out, what)
	if err != nil {
		return nil, err
	}
	var ds devices
	for n, raw := range ls {
		line := strings.TrimSpace(raw)
		if line == "" || line == noDevices || strings.HasPrefix(line, "MIG ") {
			continue
		}
		rest, ok := strings.CutPrefix(line, "GPU ")
		id, rest, ok2 := strings.Cut(rest, ": ")
		if !ok || !ok2 {
			return nil, fmt.Errorf("%s: line %d %q is not \"GPU N: NAME (UUID: ...)\"", what, n+1, clip(line))
		}
		name, uuid := rest, ""
		if i := strings.LastIndex(rest, " (UUID: "); i >= 0 && strings.HasSuffix(rest, ")") {
			name, uuid = rest[:i], rest[i+len(" (UUID: "):len(rest)-1]
		}
		if err := ds.add(what, n+1, id, Device{Vendor: NVIDIA, Name: strings.TrimSpace(name), UUID: strings.TrimSpace(uuid)}); err != nil {
			return nil, err
		}
	}
	return ds.list, nil
}

// ParseRocmSmi reads the plain form Miles' ROCm workflow calls,
// `rocm-smi --showproductname`, and also its --showuniqueid section when
// asked for together (`rocm-smi --showproductname --showuniqueid`): lines
// "GPU[N]<tabs>: Card Series: <tabs>AMD Instinct MI355X" and
// "GPU[N]<tabs>: Unique ID: 0x...". The banner and section rules, and any
// line not about a GPU[N] (warnings), are skipped. A GPU's name is its Card
// Series; one that shows none takes its Card Model.
func ParseRocmSmi(out []byte) ([]Device, error) {
	const what = "rocm-smi --showproductname"
	ls, err := lines(out, what)
	if err != nil {
		return nil, err
	}
	type card struct{ series, model, uid string }
	var order []string
	cards := map[string]*card{}
	for n, raw := range ls {
		line := strings.TrimSpace(raw)
		rest, ok := strings.CutPrefix(line, "GPU[")
		if !ok {
			continue
		}
		id, rest, ok := strings.Cut(rest, "]")
		if _, isIdx := index(id); !ok || !isIdx {
			return nil, fmt.Errorf("%s: line %d %q does not start with GPU[N]", what, n+1, clip(line))
		}
		rest = strings.TrimSpace(rest)
		rest, _ = strings.CutPrefix(rest, ":")
		key, val, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		c := cards[id]
		if c == nil {
			if len(order) >= MaxDevices {
				return nil, fmt.Errorf("%s: lists more than %d GPUs", what, MaxDevices)
			}
			c = &card{}
			cards[id] = c
			order = append(order, id)
		}
		switch key {
		case "Card Series":
			c.series = val
		case "Card Model":
			c.model = val
		case "Unique ID":
			c.uid = val
		}
	}
	var ds devices
	for _, id := range order {
		c := cards[id]
		name := c.series
		if name == "" || name == "N/A" {
			name = c.model
		}
		if name == "" {
			// A GPU[N] seen only in another section (its unique id) has no
			// name here: the output is not the product-name form.
			return nil, fmt.Errorf("%s: GPU[%s] shows no Card Series or Card Model (is this rocm-smi --showproductname's output?)", what, id)
		}
		if err := ds.add(what, 0, id, Device{Vendor: AMD, Name: name, UUID: c.uid}); err != nil {
			return nil, err
		}
	}
	return ds.list, nil
}

// devices collects parsed devices, checking each and filling in its model.
type devices struct {
	list []Device
	seen map[device.ID]bool
}

func (ds *devices) add(what string, line int, id string, d Device) error {
	at := ""
	if line > 0 {
		at = fmt.Sprintf(" line %d:", line)
	}
	var isIdx bool
	d.ID, isIdx = index(id)
	switch {
	case !isIdx:
		return fmt.Errorf("%s:%s %q is not a GPU index", what, at, clip(id))
	case d.Name == "":
		return fmt.Errorf("%s:%s GPU %s has no name", what, at, d.ID)
	case ds.seen[d.ID]:
		return fmt.Errorf("%s:%s GPU %s is listed twice; run it by hand to see why", what, at, d.ID)
	case len(ds.list) >= MaxDevices:
		return fmt.Errorf("%s: lists more than %d GPUs", what, MaxDevices)
	}
	if ds.seen == nil {
		ds.seen = map[device.ID]bool{}
	}
	ds.seen[d.ID] = true
	d.Model, _ = Model(d.Name)
	ds.list = append(ds.list, d)
	return nil
}

// index reads a device index as the vendor tools print it, through the one
// parser of device ids (a uuid is no index here).
func index(s string) (device.ID, bool) {
	id, err := device.ParseID(s)
	if err != nil {
		return "", false
	}
	_, ok := id.Index()
	return id, ok
}

// clip shortens a line quoted in an error.
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "..."
}

// models maps a model token of a vendor's GPU name (upper case) to the
// runner label of that model, the label Miles' runners carry (h200, h100,
// b200, mi350). A name is split into tokens at spaces and hyphens
// ("NVIDIA A100-SXM4-80GB" gives A100); its first token found here names the
// model. A name with none (a GeForce card, a future model) has no model:
// declare such GPUs as --gpus KIND:IDS.
//
// AMD labels name the generation, as Miles' runners do: its MI350 hosts
// carry MI355X cards (the ROCm image is tagged miles-rocm720-mi35x, one
// image for the gfx950 generation) and their runners are labelled mi350, so
// MI350X and MI355X are both mi350. MI300X and MI300A are mi300; MI325X, a
// gfx942 card like MI300X with more memory, is its own mi325 so a stage
// labelled for one never silently runs on the other.
var models = map[string]device.Model{
	// NVIDIA data-centre models.
	"V100":  "v100",
	"A100":  "a100",
	"A800":  "a800",
	"H100":  "h100",
	"H800":  "h800",
	"H20":   "h20",
	"H200":  "h200",
	"GH200": "gh200",
	"B200":  "b200",
	"B300":  "b300",
	"GB200": "gb200",
	"GB300": "gb300",
	"L4":    "l4",
	"L40":   "l40",
	"L40S":  "l40s",
	// AMD Instinct models.
	"MI210":  "mi210",
	"MI250":  "mi250",
	"MI250X": "mi250",
	"MI300A": "mi300",
	"MI300X": "mi300",
	"MI308X": "mi308",
	"MI325X": "mi325",
	"MI350X": "mi350",
	"MI355X": "mi350",
}

// Model is the runner label a vendor name names ("NVIDIA H100 80GB HBM3" ->
// "h100"), never from a count: false when no token of the name is a model
// in the table above.
func Model(name string) (device.Model, bool) {
	if len(name) > 256 {
		return "", false
	}
	for _, tok := range strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == ' ' || r == '-' || r == '\t' || r == '_' }) {
		if label, ok := models[tok]; ok {
			return label, true
		}
	}
	return "", false
}

// Labels are the runner labels Model gives, sorted, for a flag's help and
// its errors.
func Labels() []device.Model {
	seen := map[device.Model]bool{}
	var out []device.Model
	for _, l := range models {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
