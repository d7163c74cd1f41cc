package hostgpu

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/device"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseNvidia(t *testing.T) {
	h200 := []Device{{ID: "0", Vendor: "nvidia", Model: "h200", Name: "NVIDIA H200", UUID: "GPU-1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"}}
	for _, tc := range []struct {
		name  string
		parse func([]byte) ([]Device, error)
		file  string
		want  []Device
	}{
		{"query", ParseNvidiaQuery, "nvidia-query-h200.txt", h200},
		{"list", ParseNvidiaList, "nvidia-L-h200.txt", h200},
		{"list with MIG instances", ParseNvidiaList, "nvidia-L-mig.txt", []Device{
			{ID: "0", Vendor: "nvidia", Model: "a100", Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-5d4c3b2a-1f0e-4d9c-8b7a-665544332211"},
			{ID: "1", Vendor: "nvidia", Model: "b200", Name: "NVIDIA B200", UUID: "GPU-6e5d4c3b-2a1f-4e0d-9c8b-7a6655443322"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse(read(t, tc.file))
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wanted %+v, got %+v (%v)", tc.want, got, err)
			}
		})
	}
	t.Run("eight H100", func(t *testing.T) {
		got, err := ParseNvidiaQuery(read(t, "nvidia-query-h100x8.txt"))
		if err != nil || len(got) != 8 {
			t.Fatalf("wanted 8 devices, got %d (%v)", len(got), err)
		}
		for i, d := range got {
			if string(d.ID) != strconv.Itoa(i) || d.Model != "h100" || d.Name != "NVIDIA H100 80GB HBM3" {
				t.Errorf("wanted GPU %d an h100, got %+v", i, d)
			}
		}
	})
}

func TestParseRocmSmi(t *testing.T) {
	got, err := ParseRocmSmi(read(t, "rocm-showproductname-mi355x.txt"))
	if err != nil || len(got) != 4 {
		t.Fatalf("wanted 4 devices, got %+v (%v)", got, err)
	}
	want := Device{ID: "3", Vendor: "amd", Model: "mi350", Name: "AMD Instinct MI355X", UUID: "0x4f3e2d1c0b0a0903"}
	if got[3] != want {
		t.Errorf("wanted %+v, got %+v", want, got[3])
	}
	got, err = ParseRocmSmi(read(t, "rocm-showproductname-mixed.txt"))
	wantMixed := []Device{
		{ID: "0", Vendor: "amd", Model: "mi300", Name: "AMD Instinct MI300X OAM"},
		{ID: "1", Vendor: "amd", Model: "", Name: "0x74a5"},
	}
	if err != nil || !reflect.DeepEqual(got, wantMixed) {
		t.Errorf("wanted %+v, got %+v (%v)", wantMixed, got, err)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", "\n", "No devices were found\n"} {
		for name, parse := range map[string]func([]byte) ([]Device, error){"query": ParseNvidiaQuery, "list": ParseNvidiaList, "rocm": ParseRocmSmi} {
			got, err := parse([]byte(in))
			if err != nil || len(got) != 0 {
				t.Errorf("%s of %q: wanted no device and no error, got %+v (%v)", name, in, got, err)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func([]byte) ([]Device, error)
		in    string
		want  string
	}{
		{"query, other fields", ParseNvidiaQuery, "0, NVIDIA H200, 0 MiB, 143771 MiB\n",
			`nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader: line 1 "0, NVIDIA H200, 0 MiB, 143771 MiB" is not index, name, uuid`},
		{"query, driver down", ParseNvidiaQuery, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
			`nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader: line 1 "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." is not index, name, uuid`},
		{"query, bad index", ParseNvidiaQuery, "GPU-1, NVIDIA H200, GPU-x\n",
			`nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader: line 1: "GPU-1" is not a GPU index`},
		{"query, one index written twice", ParseNvidiaQuery, "0, NVIDIA H200, GPU-a\n00, NVIDIA H200, GPU-b\n",
			`nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader: line 2: GPU 0 is listed twice; run it by hand to see why`},
		{"query, twice", ParseNvidiaQuery, "0, NVIDIA H200, GPU-a\n0, NVIDIA H200, GPU-b\n",
			`nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader: line 2: GPU 0 is listed twice; run it by hand to see why`},
		{"query, no name", ParseNvidiaQuery, "0, , GPU-a\n",
			`nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader: line 1: GPU 0 has no name`},
		{"list, table", ParseNvidiaList, "|   0  NVIDIA H200   On  |\n",
			`nvidia-smi -L: line 1 "|   0  NVIDIA H200   On  |" is not "GPU N: NAME (UUID: ...)"`},
		{"rocm, bad index", ParseRocmSmi, "GPU[x]\t\t: Card Series: \t\tAMD Instinct MI355X\n",
			`rocm-smi --showproductname: line 1 "GPU[x]\t\t: Card Series: \t\tAMD Instinct MI355X" does not start with GPU[N]`},
		{"rocm, no name", ParseRocmSmi, "GPU[0]\t\t: Unique ID: 0x1\n",
			`rocm-smi --showproductname: GPU[0] shows no Card Series or Card Model (is this rocm-smi --showproductname's output?)`},
		{"too big", ParseNvidiaList, strings.Repeat("x", MaxInput+1),
			`nvidia-smi -L: output of 1048577 bytes is over the 1048576 bytes read; run it by hand to see why`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.parse([]byte(tc.in))
			if err == nil || err.Error() != tc.want {
				t.Errorf("wanted %q, got %v", tc.want, err)
			}
		})
	}
}

func TestMaxDevices(t *testing.T) {
	var b strings.Builder
	for i := 0; i <= MaxDevices; i++ {
		b.WriteString("GPU " + strconv.Itoa(i) + ": NVIDIA H200 (UUID: GPU-x)\n")
	}
	want := "nvidia-smi -L: lists more than 256 GPUs"
	if _, err := ParseNvidiaList([]byte(b.String())); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
	b.Reset()
	for i := 0; i <= MaxDevices; i++ {
		b.WriteString("GPU[" + strconv.Itoa(i) + "]\t: Card Series: AMD Instinct MI355X\n")
	}
	want = "rocm-smi --showproductname: lists more than 256 GPUs"
	if _, err := ParseRocmSmi([]byte(b.String())); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}

func TestModel(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"NVIDIA H200", "h200"},
		{"NVIDIA H200 NVL", "h200"},
		{"NVIDIA H100 80GB HBM3", "h100"},
		{"NVIDIA H100 PCIe", "h100"},
		{"NVIDIA B200", "b200"},
		{"NVIDIA A100-SXM4-80GB", "a100"},
		{"NVIDIA GB200", "gb200"},
		{"NVIDIA L40S", "l40s"},
		{"Tesla V100-SXM2-32GB", "v100"},
		{"nvidia h20", "h20"},
		{"AMD Instinct MI355X", "mi350"},
		{"AMD Instinct MI350X", "mi350"},
		{"AMD Instinct MI325X", "mi325"},
		{"AMD Instinct MI300X OAM", "mi300"},
		{"NVIDIA GeForce RTX 4090", ""},
		{"NVIDIA H2000", ""},
		{"0x74a5", ""},
		{"", ""},
	} {
		got, ok := Model(tc.name)
		if string(got) != tc.want || ok != (tc.want != "") {
			t.Errorf("Model(%q): wanted %q, got %q (%v)", tc.name, tc.want, got, ok)
		}
	}
}

func TestLabels(t *testing.T) {
	got := fmt.Sprint(Labels())
	got = strings.Trim(got, "[]")
	want := "a100 a800 b200 b300 gb200 gb300 gh200 h100 h20 h200 h800 l4 l40 l40s mi210 mi250 mi300 mi308 mi325 mi350 v100"
	if got != want {
		t.Errorf("wanted %q, got %q", want, got)
	}
}

// TestEveryNamedModelHasAVendor holds the name table to the vocabulary:
// every label a GPU's name gives is a model package device knows the
// vendor of (the one that --substitute and the checks of a run ask).
func TestEveryNamedModelHasAVendor(t *testing.T) {
	for tok, m := range models {
		v, ok := m.VendorOf()
		if !ok {
			t.Errorf("%s gives %s, which device does not know the vendor of", tok, m)
			continue
		}
		if want := map[bool]device.Vendor{true: AMD, false: NVIDIA}[strings.HasPrefix(tok, "MI")]; v != want {
			t.Errorf("%s gives %s of vendor %s, wanted %s", tok, m, v, want)
		}
	}
}
