package usecase

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/hostlock"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/stagerun"
)

// HostLock is the host lock of this machine (rules §14.3) in dir
// (hostlock.DefaultDir when ""), as a run's cirun.Leaser: it leases the
// devices of the hosts whose engine runs here (the local engine, or a
// unix:// socket), and none of a remote host, whose GPUs another
// machine's processes share.
func HostLock(dir string, args []string) cirun.Leaser {
	if dir == "" {
		dir = hostlock.DefaultDir()
	}
	return localLeaser{&hostlock.Lock{Dir: dir, Who: who(args)}}
}

// who is a process as a waiter sees it: its command line, cut short.
func who(args []string) string {
	s := strings.Join(args, " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

type localLeaser struct{ l *hostlock.Lock }

func (x localLeaser) TryLease(h cirun.Host, devs []string) (func(), cirun.Held, bool, error) {
	if h.Engine != "" && !strings.HasPrefix(h.Engine, "unix://") {
		return func() {}, cirun.Held{}, true, nil
	}
	return x.l.TryLease(h, devs)
}

// LeaseRetry is how often a shard that waits for devices another process
// holds asks again.
const LeaseRetry = time.Second

// Lease holds devs of host h in the lock until release, as `run` holds its
// shard's GPUs: it waits while another process holds some, telling
// waiting who (on each change), until ctx ends.
func Lease(ctx context.Context, l cirun.Leaser, h cirun.Host, devs []string, waiting func(cirun.Held)) (release func(), err error) {
	last := ""
	tick := time.NewTicker(LeaseRetry)
	defer tick.Stop()
	for {
		release, held, ok, err := l.TryLease(h, devs)
		if err != nil {
			return nil, err
		}
		if ok {
			return release, nil
		}
		if s := fmt.Sprint(held); s != last && waiting != nil {
			last = s
			waiting(held)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped while waiting for GPUs %s, held by %s", strings.Join(held.Devices, ","), held.By)
		case <-tick.C:
		}
	}
}

// ReadHosts reads a --hosts file (rules §14): its hosts, with this
// machine's GPUs (detect) where a local host gives gpus: all.
func ReadHosts(path string, detect func() ([]cirun.Detected, error)) ([]cirun.Host, error) {
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
// host shows; none with --gpus none and no visible devices.
func RunDevices(req stagerun.Request, detect func() ([]cirun.Detected, error)) (cirun.Host, []string) {
	var h cirun.Host
	if found, err := detect(); err == nil {
		for _, d := range found {
			h.Devices = append(h.Devices, d.ID)
		}
	}
	switch {
	case req.VisibleDevices != "":
		return h, strings.Split(req.VisibleDevices, ",")
	case req.GPUs.None:
		return h, nil
	case len(req.GPUs.Devices) > 0:
		return h, req.GPUs.Devices
	}
	return h, h.Devices
}
