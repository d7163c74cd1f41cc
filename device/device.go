// Package device is miles-ci's one vocabulary of GPUs: a device id, a set
// of them, a GPU model (the runner label Miles gives it) and its vendor.
// Every flag and file that names devices (--gpus, a --hosts file,
// --visible-devices, what --gpus all reads) is parsed here, once, into these
// types, and normalised on the way (00 and 0 are one device), so the placer,
// the host lock, the stage request and the container spec compare devices
// that are written one way. It reads text only.
package device

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/internal/nearest"
)

// ID is one GPU as the vendor tools and the visible-devices variables
// (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES) name it: its index without
// leading zeros ("0", "12"), or an NVIDIA GPU or MIG instance uuid in
// lower case ("GPU-769e662b-...", "MIG-...").
type ID string

// MaxIndex bounds a device index: no host has more GPUs than this.
const MaxIndex = 1<<20 - 1

// maxIDLen bounds an id as written (a uuid and its prefix).
const maxIDLen = 80

// NotIDError is text that is no device id or range: the caller, which
// knows the flag, adds what to give instead.
type NotIDError struct{ msg string }

func (e *NotIDError) Error() string { return e.msg }

func notID(format string, args ...any) error {
	return &NotIDError{fmt.Sprintf(format, args...)}
}

// ParseID reads one device id: an index ("0", "07" is device 7), or a
// uuid GPU-... or MIG-... of hex digits and dashes (its letters lowered).
func ParseID(s string) (ID, error) {
	if s == "" {
		return "", notID("an empty device id (an index such as 0, or a uuid GPU-...)")
	}
	if len(s) > maxIDLen {
		return "", notID("%q is not a device id: longer than %d characters", s[:maxIDLen]+"...", maxIDLen)
	}
	if allDigits(s) {
		t := strings.TrimLeft(s, "0")
		if t == "" {
			t = "0"
		}
		n, err := strconv.Atoi(t)
		if err != nil || n > MaxIndex {
			return "", notID("%q is not a device id: an index is at most %d", s, MaxIndex)
		}
		return ID(strconv.Itoa(n)), nil
	}
	for _, prefix := range []string{"GPU-", "MIG-"} {
		rest, ok := strings.CutPrefix(s, prefix)
		if !ok {
			continue
		}
		if rest == "" || strings.Trim(strings.ToLower(rest), "0123456789abcdef-") != "" {
			return "", notID("%q is not a device id: after %s come hex digits and dashes", s, prefix)
		}
		return ID(prefix + strings.ToLower(rest)), nil
	}
	return "", notID("%q is not a device id (an index such as 0, or a uuid GPU-...)", s)
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Index is the id's index, false for a uuid.
func (id ID) Index() (int, bool) {
	if !allDigits(string(id)) {
		return 0, false
	}
	n, err := strconv.Atoi(string(id))
	return n, err == nil
}

// Compare orders ids: indexes by number, before uuids, which go by text.
func Compare(a, b ID) int {
	x, okA := a.Index()
	y, okB := b.Index()
	switch {
	case okA && okB:
		return x - y
	case okA:
		return -1
	case okB:
		return 1
	}
	return strings.Compare(string(a), string(b))
}

// Set is devices in the order given, each once.
type Set []ID

// MaxSet bounds how many devices one set names.
const MaxSet = 256

// ParseSet reads a comma-separated list of ids and ranges of indexes:
// "0,1,2,3", "0-3", "0-3,6", "GPU-...,GPU-...". Every id is normalised; one
// named twice ("0,0", "0-3,02") is an error that names it.
func ParseSet(s string) (Set, error) {
	if s == "" {
		return nil, notID("no device id (ids such as 0,1, or a range such as 0-3)")
	}
	var out Set
	for part := range strings.SplitSeq(s, ",") {
		ids, err := parseRange(part)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if out, err = out.With(id); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// parseRange reads one id, or a range of indexes LO-HI.
func parseRange(part string) ([]ID, error) {
	lo, hi, isRange := strings.Cut(part, "-")
	if !isRange || !allDigits(lo) {
		id, err := ParseID(part)
		if err != nil {
			return nil, err
		}
		return []ID{id}, nil
	}
	a, errA := ParseID(lo)
	b, errB := ParseID(hi)
	x, _ := a.Index()
	y, okB := b.Index()
	if errA != nil || errB != nil || !okB || y < x {
		return nil, notID("%q is not a device range (LOW-HIGH of indexes, such as 0-7)", part)
	}
	if y-x >= MaxSet {
		return nil, fmt.Errorf("%q names more than %d devices", part, MaxSet)
	}
	out := make([]ID, 0, y-x+1)
	for n := x; n <= y; n++ {
		out = append(out, ID(strconv.Itoa(n)))
	}
	return out, nil
}

// With is the set with id added at its end; an id the set names already
// is an error that names it, as is a set over MaxSet.
func (s Set) With(id ID) (Set, error) {
	if slices.Contains(s, id) {
		return nil, fmt.Errorf("device %s is named twice", id)
	}
	if len(s) >= MaxSet {
		return nil, fmt.Errorf("more than %d devices", MaxSet)
	}
	return append(s, id), nil
}

// NewSet makes a set of ids that are already parsed; one named twice is an
// error that names it.
func NewSet(ids ...ID) (Set, error) {
	var out Set
	for _, id := range ids {
		var err error
		if out, err = out.With(id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// String is the set as the visible-devices variables take it: "0,1,2,3".
func (s Set) String() string {
	parts := make([]string, len(s))
	for i, id := range s {
		parts[i] = string(id)
	}
	return strings.Join(parts, ",")
}

// Strings are the ids as text.
func (s Set) Strings() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, id := range s {
		out[i] = string(id)
	}
	return out
}

// Contains says whether the set names id.
func (s Set) Contains(id ID) bool { return slices.Contains(s, id) }

// Sorted is the set in Compare order.
func (s Set) Sorted() Set {
	out := slices.Clone(s)
	slices.SortFunc(out, Compare)
	return out
}

// Ranges writes the set with consecutive indexes as ranges: "0-3,6".
func (s Set) Ranges() string {
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && Consecutive(s[j], s[j+1]) {
			j++
		}
		p := string(s[i])
		if j > i {
			p += "-" + string(s[j])
		}
		parts = append(parts, p)
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Consecutive says whether b is the index after a.
func Consecutive(a, b ID) bool {
	x, okA := a.Index()
	y, okB := b.Index()
	return okA && okB && y == x+1
}

// Model is a GPU model as the runner label Miles gives it: h100, h200,
// b200, mi350 (rules §14.1), lower case.
type Model string

// maxModelLen bounds a model label.
const maxModelLen = 32

// ParseModel reads a model label (lower-cased): letters, digits, '_', '.'
// and '-', starting with a letter. Whether miles-ci knows it is Known's
// question.
func ParseModel(s string) (Model, error) {
	m := strings.ToLower(s)
	ok := m != "" && len(m) <= maxModelLen && m[0] >= 'a' && m[0] <= 'z' &&
		strings.Trim(m, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == "" && m != "none" && m != "all"
	if !ok {
		return "", fmt.Errorf("%q is not a GPU model; write the model as its runner label, such as h200 or mi350", s)
	}
	return Model(m), nil
}

// Upper is the model as a person writes it: H200.
func (m Model) Upper() string { return strings.ToUpper(string(m)) }

// Vendor is who makes a GPU: the vendor tool that lists it and the
// visible-devices variable that splits it.
type Vendor string

// The vendors.
const (
	NVIDIA Vendor = "nvidia"
	AMD    Vendor = "amd"
)

// vendors are the runner labels miles-ci knows, each with its vendor:
// Miles' runners' (h100, h200, b200, mi350) and those hostgpu reads from a
// GPU's name (TestEveryNamedModelHasAVendor in hostgpu holds the two
// together).
var vendors = map[Model]Vendor{
	"v100": NVIDIA, "a100": NVIDIA, "a800": NVIDIA, "h100": NVIDIA, "h800": NVIDIA, "h20": NVIDIA,
	"h200": NVIDIA, "gh200": NVIDIA, "b200": NVIDIA, "b300": NVIDIA, "gb200": NVIDIA, "gb300": NVIDIA,
	"l4": NVIDIA, "l40": NVIDIA, "l40s": NVIDIA,
	"mi210": AMD, "mi250": AMD, "mi300": AMD, "mi308": AMD, "mi325": AMD, "mi350": AMD,
}

// VendorOf is the vendor of a model miles-ci knows; false for another.
func (m Model) VendorOf() (Vendor, bool) {
	v, ok := vendors[m]
	return v, ok
}

// MilesModels are the models of Miles' own runners (rules §14.1-§14.3):
// the labels its stage jobs and its hosts carry.
var MilesModels = []Model{"h100", "h200", "b200", "mi350"}

// Known checks that a model given by a person (--gpus, a hosts file,
// --substitute) is one of known, the models a run can use; another is an
// error with the nearest known one ("did you mean h200?") and the list.
func Known(m Model, known []Model) error {
	if slices.Contains(known, m) {
		return nil
	}
	names := make([]string, len(known))
	for i, k := range known {
		names[i] = string(k)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	hint := ""
	if near := nearest.Name(string(m), names); near != "" {
		hint = fmt.Sprintf("did you mean %s? ", near)
	}
	return fmt.Errorf("%s is not a GPU model of this run; %sthe models its stages and Miles' runners use are %s", m, hint, strings.Join(names, ", "))
}

// Device is one device and its model ("" when not known).
type Device struct {
	ID    ID
	Model Model
}

// ParseList reads devices with their models, as --gpus gives them:
// "h200:0-7", "h200:0-3,h100:4-7" (an id without a model has the model
// before it), or bare ids "0-7" (every Model ""). Either every device has
// a model or none does; one named twice is an error that names it.
func ParseList(s string) ([]Device, error) {
	var out []Device
	var ids Set
	var model Model
	kinds := 0
	for part := range strings.SplitSeq(s, ",") {
		if k, rest, ok := strings.Cut(part, ":"); ok {
			m, err := ParseModel(k)
			if err != nil {
				return nil, err
			}
			model, part = m, rest
			kinds++
		}
		got, err := parseRange(part)
		if err != nil {
			return nil, err
		}
		for _, id := range got {
			if ids, err = ids.With(id); err != nil {
				return nil, err
			}
			out = append(out, Device{ID: id, Model: model})
		}
	}
	if kinds > 0 && out[0].Model == "" {
		return nil, fmt.Errorf("a model is given to some devices only; give one to every device (h200:0-3,h100:4-7) or to none")
	}
	return out, nil
}

// IDs are the devices' ids.
func IDs(ds []Device) Set {
	out := make(Set, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}
