package hostgpu

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/radixark/miles-ci/device"
)

// seed adds every fixture and a few odd inputs to a fuzz corpus.
func seed(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "GPU 0: ", "GPU[0]", "GPU[0]:", "0,,", "GPU 0: x (UUID: )", "\r\n"} {
		f.Add([]byte(s))
	}
}

// check holds what every parse promises: an error, or devices each with an
// index, a name and a vendor, no more than MaxDevices, no id twice.
func check(t *testing.T, ds []Device, err error, vendor device.Vendor) {
	if err != nil {
		return
	}
	if len(ds) > MaxDevices {
		t.Fatalf("wanted at most %d devices, got %d", MaxDevices, len(ds))
	}
	seen := map[device.ID]bool{}
	for _, d := range ds {
		if id, ok := index(string(d.ID)); !ok || id != d.ID || d.Name == "" || d.Vendor != vendor || seen[d.ID] {
			t.Fatalf("wanted a named %s device with a fresh index, got %+v", vendor, d)
		}
		seen[d.ID] = true
		if m, _ := Model(d.Name); m != d.Model {
			t.Fatalf("wanted model %q for %q, got %q", m, d.Name, d.Model)
		}
	}
}

func FuzzParseNvidiaQuery(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ParseNvidiaQuery(b)
		check(t, ds, err, NVIDIA)
	})
}

func FuzzParseNvidiaList(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ParseNvidiaList(b)
		check(t, ds, err, NVIDIA)
	})
}

func FuzzParseRocmSmi(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ParseRocmSmi(b)
		check(t, ds, err, AMD)
	})
}

func FuzzModel(f *testing.F) {
	for _, s := range []string{"NVIDIA H200", "AMD Instinct MI355X", "", "-", "NVIDIA A100-SXM4-80GB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := Model(s)
		if ok != (m != "") {
			t.Fatalf("Model(%q): wanted ok only with a label, got %q %v", s, m, ok)
		}
	})
}
