package hostlock

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/device"
)

// TestLocal: every engine that runs on this machine takes the lock,
// whatever its address (issue 38 item 9: a loopback tcp:// or a
// docker-container:// engine skipped it and two runs shared devices); a
// kube-pod:// or ssh:// engine, or another machine's address, does not.
func TestLocal(t *testing.T) {
	answer(t, map[string][]string{"localhost4": {"127.0.0.1"}, "engine-alias": {"::1", "192.0.2.8"}, "gpu-b.example": {"192.0.2.9"}})
	name, _ := os.Hostname()
	tests := []struct {
		engine string
		local  bool
	}{
		{"", true},
		{"unix:///run/dagger/engine.sock", true},
		{"tcp://127.0.0.1:1234", true},
		{"tcp://127.0.0.2:1234", true},
		{"tcp://localhost:1234", true},
		{"tcp://LOCALHOST", true},
		{"tcp://[::1]:1234", true},
		{"tcp://0.0.0.0:1234", true},
		{"tcp://" + name + ":1234", true},
		{"docker-container://dagger-engine", true},
		{"podman-container://dagger-engine", true},
		{"kube-pod://dagger-engine?namespace=ci", false},
		{"ssh://gpu-a", false},
		{"tcp://gpu-a.example:1234", false},
		{"tcp://192.0.2.7:1234", false},
		// A name that resolves to this machine (an /etc/hosts alias of
		// 127.0.0.1) is this machine's; one that resolves elsewhere, or
		// not at all, is not.
		{"tcp://localhost4:1234", true},
		{"tcp://engine-alias:1234", true},
		{"tcp://gpu-b.example:1234", false},
		{"tcp://[::ffff:127.0.0.1]:1234", true},
		{"nonsense", false},
	}
	for _, tt := range tests {
		if got := Local(tt.engine); got != tt.local {
			t.Errorf("Local(%q): wanted %v, got %v", tt.engine, tt.local, got)
		}
	}
}

// TestEveryLocalEngineIsLeased: the leaser takes the lock for a host whose
// engine is this machine's at a loopback tcp:// or docker-container://
// address, so a second run's shard waits (issue 38 item 9), and takes none
// for a remote engine.
func TestEveryLocalEngineIsLeased(t *testing.T) {
	answer(t, map[string][]string{"loopback-alias": {"127.0.0.1"}})
	dir := t.TempDir()
	for _, engine := range []string{"tcp://127.0.0.1:1234", "tcp://loopback-alias:1234", "docker-container://dagger-engine", "podman-container://e", ""} {
		a, b := New(dir, []string{"run", "a"}), New(dir, []string{"run", "b"})
		h := host(t, "h200:0-7")
		h.Engine = engine
		release, _, ok, err := a.TryLease(h, device.Set{"0"})
		if !ok || err != nil {
			t.Fatalf("%s: wanted the lease, got ok=%v %v", engine, ok, err)
		}
		if _, held, ok, _ := b.TryLease(h, device.Set{"0"}); ok || !strings.Contains(held.By, "(run a)") {
			t.Errorf("%s: wanted device 0 held by run a, got ok=%v %+v", engine, ok, held)
		}
		release()
	}
	remote := host(t, "h200:0-7")
	remote.Engine = "tcp://gpu-a.example:1234"
	r1, _, ok1, _ := New(dir, nil).TryLease(remote, device.Set{"0"})
	r2, _, ok2, _ := New(dir, nil).TryLease(remote, device.Set{"0"})
	if !ok1 || !ok2 {
		t.Errorf("wanted a remote host's devices left to its own machine's lock, got %v %v", ok1, ok2)
	}
	r1()
	r2()
}

// answer makes the names of addrs resolve to them, and every other name to
// nothing, for the test.
func answer(t *testing.T, addrs map[string][]string) {
	t.Helper()
	old := lookupHost
	t.Cleanup(func() {
		lookupHost = old
		resolved.Clear()
	})
	resolved.Clear()
	lookupHost = func(_ context.Context, host string) ([]string, error) {
		if a, ok := addrs[host]; ok {
			return a, nil
		}
		return nil, errors.New("no such host")
	}
}
