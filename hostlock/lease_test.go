package hostlock

import (
	"os"
	"testing"
)

// TestLocal: every engine that runs on this machine takes the lock,
// whatever its address (issue 38 item 9: a loopback tcp:// or a
// docker-container:// engine skipped it and two runs shared devices); a
// kube-pod:// or ssh:// engine, or another machine's address, does not.
func TestLocal(t *testing.T) {
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
		{"nonsense", false},
	}
	for _, tt := range tests {
		if got := Local(tt.engine); got != tt.local {
			t.Errorf("Local(%q): wanted %v, got %v", tt.engine, tt.local, got)
		}
	}
}
