package usecase

import (
	"fmt"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/stagerun"
)

// ReadHosts reads a --hosts file (rules §14): its hosts, with this
// machine's GPUs (detect) where a local host gives gpus: all.
func ReadHosts(path string, detect cirun.Detect) ([]cirun.Host, error) {
	data, err := fsinput.ReadFile(path, fsinput.HostsFile)
	if err != nil {
		return nil, fmt.Errorf("--hosts: %w", err)
	}
	return cirun.ParseHosts(path, data, detect)
}

// ParseSubstitutes reads --substitute values; a model substituted twice is
// an error.
func ParseSubstitutes(values []string) ([]cirun.Substitute, error) {
	var out []cirun.Substitute
	for _, v := range values {
		s, err := cirun.ParseSubstitute(v)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if o.From == s.From {
				return nil, fmt.Errorf("--substitute %s and %s both give %s; give one substitute per model", o, s, s.From)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// RunDevices are the devices a stage or file run holds in the host lock
// (rules §14.3), and the host as far as it is known: its visible devices
// where given, else the ids its --gpus lists, else (all) every device the
// host shows; none with --gpus none and no visible devices. With --gpus
// none the engine gives no GPU: visible devices are stand-ins, leased
// apart from this machine's GPUs (cirun.Host.StandIn).
func RunDevices(req stagerun.Request, detect cirun.Detect) (cirun.Host, device.Set) {
	if req.GPUs.None {
		return cirun.Host{StandIn: true, Devices: req.VisibleDevices}, req.VisibleDevices
	}
	var h cirun.Host
	if found, err := detect(); err == nil {
		for _, d := range found {
			h.Devices = append(h.Devices, d.ID)
		}
	}
	switch {
	case len(req.VisibleDevices) > 0:
		return h, req.VisibleDevices
	case len(req.GPUs.Devices) > 0:
		return h, req.GPUs.Devices
	}
	return h, h.Devices
}
