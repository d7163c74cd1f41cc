package cirun

import (
	"errors"
	"testing"

	"github.com/radixark/miles-ci/hostgpu"
)

// TestParseGPUsLooksAtNothing: reading --gpus detects nothing (all, or no
// value, is left to DetectedHost), and ParseHost is the two together.
func TestParseGPUsLooksAtNothing(t *testing.T) {
	for _, s := range []string{"", "all"} {
		if g, err := ParseGPUs(s); err != nil || !g.All || len(g.Host.Devices) > 0 {
			t.Errorf("ParseGPUs(%q): wanted all, got %+v %v", s, g, err)
		}
	}
	g, err := ParseGPUs("h200:0-1")
	if err != nil || g.All || g.Host.String() != "h200:0-1" {
		t.Errorf("wanted h200:0-1, got %+v %v", g, err)
	}
	if _, err := ParseGPUs("h200:0,0"); err == nil {
		t.Error("wanted an id named twice refused")
	}
	found := []hostgpu.Device{{ID: "0", Model: "h200"}, {ID: "1", Model: "h200"}}
	h, err := DetectedHost(found, nil)
	if err != nil || !h.Detected || h.String() != "h200:0-1" {
		t.Errorf("wanted the detected h200:0-1, got %+v %v", h, err)
	}
	if _, err := DetectedHost(nil, errors.New("nvidia-smi: not on PATH")); err == nil || err.Error() != "--gpus all: nvidia-smi: not on PATH; give the devices (h200:0-7, 0-7), or none for stand-ins" {
		t.Errorf("wanted the detection's error, got %v", err)
	}
	if h, err := ParseHost("all", func() ([]hostgpu.Device, error) { return found, nil }); err != nil || h.String() != "h200:0-1" {
		t.Errorf("ParseHost(all): wanted h200:0-1, got %+v %v", h, err)
	}
}
