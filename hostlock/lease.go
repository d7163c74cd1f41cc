package hostlock

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/device"
)

// New is the host lock of this machine in dir (DefaultDir when ""), as a
// run's cirun.Leaser: it leases the devices of the hosts whose engine runs
// on this machine (the local engine, or a unix:// socket), and none of a
// remote host, whose GPUs another machine's processes share. args is the
// command line a waiter is shown.
func New(dir string, args []string) cirun.Leaser {
	if dir == "" {
		dir = DefaultDir()
	}
	return localLeaser{&Lock{Dir: dir, Who: who(args)}}
}

// who is a process as a waiter sees it: its command line, cut short.
func who(args []string) string {
	s := strings.Join(args, " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

type localLeaser struct{ l *Lock }

func (x localLeaser) TryLease(h cirun.Host, devs device.Set) (func(), cirun.Held, bool, error) {
	if h.Engine != "" && !strings.HasPrefix(h.Engine, "unix://") {
		return func() {}, cirun.Held{}, true, nil
	}
	return x.l.TryLease(h, devs)
}

// Retry is how often a shard that waits for devices another process holds
// asks again.
const Retry = time.Second

// Lease holds devs of host h in the lock until release, as `run` holds its
// shard's GPUs: it waits while another process holds some, telling
// waiting who (on each change), until ctx ends.
func Lease(ctx context.Context, l cirun.Leaser, h cirun.Host, devs device.Set, waiting func(cirun.Held)) (release func(), err error) {
	last := ""
	tick := time.NewTicker(Retry)
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
			return nil, fmt.Errorf("stopped while waiting for GPUs %s, held by %s", held.Devices, held.By)
		case <-tick.C:
		}
	}
}
