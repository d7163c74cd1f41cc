package hostlock

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/device"
)

// New is the host lock of this machine in dir (DefaultDir when ""), as a
// run's cirun.Leaser: it leases the devices of every host whose engine runs
// on this machine, whatever its address (Local), and none of a remote
// host, whose GPUs another machine's processes share. args is the command
// line a waiter is shown.
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
	if !Local(h.Engine) {
		return func() {}, cirun.Held{}, true, nil
	}
	return x.l.TryLease(h, devs)
}

// Local says whether an engine address runs on this machine, so its GPUs
// are this machine's and its shards take the lock: the default engine
// (""), a unix:// socket, a docker-container:// or podman-container://
// engine (a container of this machine's runtime), and a tcp:// engine at
// a loopback address, localhost, this machine's name or one of its own
// addresses, or at a name that resolves to one (an /etc/hosts alias of
// 127.0.0.1 such as localhost4 or localhost.localdomain). A kube-pod://
// engine runs wherever its cluster puts it, and ssh:// on another machine:
// neither is this machine's.
func Local(engine string) bool {
	scheme, rest, ok := strings.Cut(engine, "://")
	switch {
	case engine == "":
		return true
	case !ok:
		return false
	case scheme == "unix" || scheme == "docker-container" || scheme == "podman-container":
		return true
	case scheme != "tcp":
		return false
	}
	host := rest
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if name, err := os.Hostname(); err == nil && host != "" && strings.EqualFold(host, name) {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return here(ip)
	}
	if host == "" {
		return false
	}
	if local, ok := resolved.Load(host); ok {
		return local.(bool)
	}
	// A name: where it leads, asked once per name and bounded (a name that
	// does not resolve is no engine of this machine, nor one to reach).
	ctx, cancel := context.WithTimeout(context.Background(), lookupBound)
	defer cancel()
	addrs, _ := lookupHost(ctx, host)
	local := false
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err == nil && here(ip) {
			local = true
		}
	}
	resolved.Store(host, local)
	return local
}

// here says whether ip is one of this machine's: a loopback or unspecified
// address, or one of its interfaces'.
func here(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == ip.Unmap() {
			return true
		}
	}
	return false
}

// lookupHost resolves an engine's host name (tests answer for it);
// resolved keeps each name's answer for the process, as a fleet asks at
// every lease.
var (
	lookupHost = net.DefaultResolver.LookupHost
	resolved   sync.Map
)

// lookupBound bounds a name's resolution.
const lookupBound = 2 * time.Second

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
