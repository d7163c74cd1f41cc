package ci

import (
	"fmt"
	"slices"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/policy"
)

// ModelError is a GPU model given on --gpus, in a hosts file or on
// --substitute that the run cannot use: input the command cannot take, as
// a usage error is.
type ModelError struct{ msg string }

func (e *ModelError) Error() string { return e.msg }

func modelError(format string, args ...any) error {
	return &ModelError{fmt.Sprintf(format, args...)}
}

// checkModels holds the models a person gave to the ones the run can use
// (rules §14.1): a model a stage of the checkout runs on, a model of
// Miles' own runners (h100, h200, b200, mi350), or the second model of a
// --substitute. Another (h20 for h200) could hold no shard: it is an error
// with the nearest known model and the list, on a stand-in host
// (none:h20:0-3) too, as that host is scheduled as the real one would be.
// A substitute's two models are of one vendor: a ROCm stage's image and
// its HIP_VISIBLE_DEVICES mean nothing on NVIDIA devices. Detected hosts
// (--gpus all) are what this machine has, and are not checked.
func checkModels(tables *policy.Tables, req CIRequest) error {
	known := slices.Clone(device.MilesModels)
	vendors := map[device.Model]device.Vendor{}
	for _, st := range tables.Roster {
		m, err := tables.GPUModel(st)
		if err != nil || m == "" {
			continue
		}
		model := device.Model(m)
		if !slices.Contains(known, model) {
			known = append(known, model)
		}
		if v := policy.ProfileOf(st.Backend).GPU; v != policy.NoGPU {
			vendors[model] = device.Vendor(v)
		}
	}
	vendorOf := func(m device.Model) (device.Vendor, bool) {
		if v, ok := m.VendorOf(); ok {
			return v, true
		}
		v, ok := vendors[m]
		return v, ok
	}
	var targets []device.Model
	for _, s := range req.Substitutes {
		if err := device.Known(s.From, known); err != nil {
			return modelError("--substitute %s: %v", s, err)
		}
		to, ok := vendorOf(s.To)
		if !ok {
			if err := device.Known(s.To, known); err != nil {
				return modelError("--substitute %s: %v", s, err)
			}
		}
		if from, _ := vendorOf(s.From); ok && from != to {
			return modelError("--substitute %s: %s is %s GPU and %s %s one; a stage runs only on GPUs of its own vendor (its image and its visible-devices variable are that vendor's), so substitute a model of the same vendor", s, s.From, article(from), s.To, article(to))
		}
		targets = append(targets, s.To)
	}
	known = append(known, targets...)
	hosts := req.Hosts
	if len(hosts) == 0 {
		hosts = []cirun.Host{req.Host}
	}
	for _, h := range hosts {
		if h.Detected {
			continue
		}
		for _, m := range h.Models {
			if err := device.Known(m, known); err != nil {
				where := "--gpus " + h.String()
				if h.Name != "" {
					where = fmt.Sprintf("--hosts: host %s (gpus %s)", h.Name, h)
				}
				return modelError("%s: %v; to run stages on %s GPUs, give --substitute MODEL=%s", where, err, m, m)
			}
		}
	}
	return nil
}

// article is a vendor as a sentence names it: "an NVIDIA", "an AMD".
func article(v device.Vendor) string {
	switch v {
	case device.NVIDIA:
		return "an NVIDIA"
	case device.AMD:
		return "an AMD"
	}
	return "a " + string(v)
}
