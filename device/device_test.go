package device

import (
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "0", want: "0"},
		{in: "00", want: "0"},
		{in: "07", want: "7"},
		{in: "12", want: "12"},
		{in: "GPU-769E662B-aa", want: "GPU-769e662b-aa"},
		{in: "MIG-0f1e", want: "MIG-0f1e"},
		{in: "", err: `an empty device id (an index such as 0, or a uuid GPU-...)`},
		{in: "x", err: `"x" is not a device id (an index such as 0, or a uuid GPU-...)`},
		{in: "-1", err: `"-1" is not a device id (an index such as 0, or a uuid GPU-...)`},
		{in: "GPU-", err: `"GPU-" is not a device id: after GPU- come hex digits and dashes`},
		{in: "GPU-xyz", err: `"GPU-xyz" is not a device id: after GPU- come hex digits and dashes`},
		{in: "99999999", err: `"99999999" is not a device id: an index is at most 1048575`},
		{in: "000000000000000000000000000001", want: "1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseID(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("wanted %q, got %q, %v", tt.err, got, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("wanted %q, got %q, %v", tt.want, got, err)
			}
		})
	}
}

func TestParseSet(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "0,1", want: "0,1"},
		{in: "00,01", want: "0,1"},
		{in: "0-3,6", want: "0,1,2,3,6"},
		{in: "00-03", want: "0,1,2,3"},
		{in: "3,1", want: "3,1"},
		{in: "GPU-ab,1", want: "GPU-ab,1"},
		{in: "0,0", err: "device 0 is named twice"},
		{in: "0,00", err: "device 0 is named twice"},
		{in: "0-3,02", err: "device 2 is named twice"},
		{in: "GPU-AB,GPU-ab", err: "device GPU-ab is named twice"},
		{in: "3-1", err: `"3-1" is not a device range (LOW-HIGH of indexes, such as 0-7)`},
		{in: "1-", err: `"1-" is not a device range (LOW-HIGH of indexes, such as 0-7)`},
		{in: "0-999", err: `"0-999" names more than 256 devices`},
		{in: "", err: "no device id (ids such as 0,1, or a range such as 0-3)"},
		{in: "0,", err: "an empty device id (an index such as 0, or a uuid GPU-...)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSet(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("wanted %q, got %q, %v", tt.err, got, err)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Errorf("wanted %q, got %q, %v", tt.want, got, err)
			}
		})
	}
}

func TestRangesAndSorted(t *testing.T) {
	s, _ := ParseSet("6,0,1,2,3,GPU-a,10")
	if got := s.Sorted().Ranges(); got != "0-3,6,10,GPU-a" {
		t.Errorf("wanted 0-3,6,10,GPU-a, got %q", got)
	}
	if got := s.Ranges(); got != "6,0-3,GPU-a,10" {
		t.Errorf("wanted the order given, got %q", got)
	}
}

func TestParseList(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "h200:0-1,h100:2", want: "0:h200 1:h200 2:h100"},
		{in: "H200:00,1", want: "0:h200 1:h200"},
		{in: "0-1", want: "0: 1:"},
		{in: "0,h200:1", err: "a model is given to some devices only; give one to every device (h200:0-3,h100:4-7) or to none"},
		{in: "h200:0,h100:00", err: "device 0 is named twice"},
		{in: "none:0", err: `"none" is not a GPU model; write the model as its runner label, such as h200 or mi350`},
		{in: "h 2:0", err: `"h 2" is not a GPU model; write the model as its runner label, such as h200 or mi350`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			ds, err := ParseList(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("wanted %q, got %v, %v", tt.err, ds, err)
				}
				return
			}
			var parts []string
			for _, d := range ds {
				parts = append(parts, string(d.ID)+":"+string(d.Model))
			}
			if err != nil || strings.Join(parts, " ") != tt.want {
				t.Errorf("wanted %q, got %q, %v", tt.want, parts, err)
			}
		})
	}
}

func TestKnown(t *testing.T) {
	if err := Known("h200", MilesModels); err != nil {
		t.Errorf("wanted h200 known, got %v", err)
	}
	want := "h20 is not a GPU model of this run; did you mean h200? the models its stages and Miles' runners use are b200, h100, h200, mi350"
	if err := Known("h20", MilesModels); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
	want = "zz9 is not a GPU model of this run; the models its stages and Miles' runners use are b200, h100, h200, mi350"
	if err := Known("zz9", MilesModels); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}

func TestVendorOfMilesModels(t *testing.T) {
	for _, m := range MilesModels {
		if _, ok := m.VendorOf(); !ok {
			t.Errorf("wanted a vendor for Miles' model %s", m)
		}
	}
}

// FuzzParseList holds what every parse promises: an error, or devices each
// once, each id in its one written form (parsing it again gives it back).
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"h200:0-7", "h200:0-3,h100:4-7", "0-7", "00,01", "GPU-ab,MIG-c", "0,0", "3-1", "", ",", "a:b:c", "0-18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ds, err := ParseList(s)
		if err != nil {
			return
		}
		if len(ds) == 0 || len(ds) > MaxSet {
			t.Fatalf("%q: wanted 1 to %d devices, got %d", s, MaxSet, len(ds))
		}
		seen := map[ID]bool{}
		for _, d := range ds {
			again, err := ParseID(string(d.ID))
			if err != nil || again != d.ID || seen[d.ID] {
				t.Fatalf("%q: wanted each id once in its normal form, got %+v", s, ds)
			}
			seen[d.ID] = true
		}
	})
}
