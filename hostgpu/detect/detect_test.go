package detect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/hostgpu"
)

// tools puts the given scripts (name -> sh text) first on PATH, before the
// system's folders.
func tools(t *testing.T, scripts map[string]string) {
	t.Helper()
	bin := t.TempDir()
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
}

// fixture is a script line printing a file of hostgpu/testdata.
func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return "cat '" + p + "'\n"
}

// devDir is a device folder with /dev/kfd and the render nodes, or without.
func devDir(t *testing.T, amd bool) string {
	t.Helper()
	dev := t.TempDir()
	if amd {
		if err := os.MkdirAll(filepath.Join(dev, "dri"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"kfd", "dri/renderD128", "dri/renderD129"} {
			if err := os.WriteFile(filepath.Join(dev, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dev
}

// kinds writes devices as ID=MODEL for comparison.
func kinds(ds []hostgpu.Device) string {
	var s []string
	for _, d := range ds {
		s = append(s, string(d.ID)+"="+string(d.Vendor)+"/"+string(d.Model))
	}
	return strings.Join(s, " ")
}

func TestDetectGPUs(t *testing.T) {
	ctx := context.Background()
	noNvidia := "echo 'No devices were found'\nexit 6\n"
	t.Run("nvidia", func(t *testing.T) {
		tools(t, map[string]string{"nvidia-smi": "[ \"$1\" = --query-gpu=index,name,uuid ] || exit 9\n" + fixture(t, "nvidia-query-h100x8.txt")})
		ds, err := detectGPUs(ctx, devDir(t, false))
		want := "0=nvidia/h100 1=nvidia/h100 2=nvidia/h100 3=nvidia/h100 4=nvidia/h100 5=nvidia/h100 6=nvidia/h100 7=nvidia/h100"
		if err != nil || kinds(ds) != want {
			t.Fatalf("wanted %q, got %q (%v)", want, kinds(ds), err)
		}
		if ds[4].Name != "NVIDIA H100 80GB HBM3" || ds[4].UUID != "GPU-a0b1c2d3-e4f5-4a6b-9c8d-000000000004" {
			t.Errorf("wanted GPU 4's name and uuid, got %+v", ds[4])
		}
	})
	t.Run("amd", func(t *testing.T) {
		tools(t, map[string]string{"nvidia-smi": noNvidia, "rocm-smi": "[ \"$*\" = '--showproductname --showuniqueid' ] || exit 9\n" + fixture(t, "rocm-showproductname-mi355x.txt")})
		ds, err := detectGPUs(ctx, devDir(t, true))
		want := "0=amd/mi350 1=amd/mi350 2=amd/mi350 3=amd/mi350"
		if err != nil || kinds(ds) != want {
			t.Fatalf("wanted %q, got %q (%v)", want, kinds(ds), err)
		}
		if ds[0].Name != "AMD Instinct MI355X" || ds[0].UUID != "0x4f3e2d1c0b0a0900" {
			t.Errorf("wanted GPU 0's name and unique id, got %+v", ds[0])
		}
	})
	t.Run("amd without /dev/kfd", func(t *testing.T) {
		tools(t, map[string]string{"nvidia-smi": noNvidia, "rocm-smi": fixture(t, "rocm-showproductname-mi355x.txt")})
		dev := devDir(t, false)
		_, err := detectGPUs(ctx, dev)
		want := "rocm-smi lists 4 AMD GPUs but " + dev + "/kfd absent, 0 " + dev + "/dri/renderD* nodes: a container cannot reach them without both; load the amdgpu driver"
		if err == nil || err.Error() != want {
			t.Errorf("wanted %q, got %v", want, err)
		}
	})
	t.Run("no tool", func(t *testing.T) {
		bin := t.TempDir()
		t.Setenv("PATH", bin)
		dev := devDir(t, false)
		_, err := detectGPUs(ctx, dev)
		want := "found no GPU (nvidia-smi: not on PATH; rocm-smi: not on PATH; " + dev + "/kfd absent, 0 " + dev + "/dri/renderD* nodes)"
		if err == nil || err.Error() != want {
			t.Errorf("wanted %q, got %v", want, err)
		}
	})
	t.Run("a driver that fails", func(t *testing.T) {
		tools(t, map[string]string{"nvidia-smi": "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9\n"})
		_, err := detectGPUs(ctx, devDir(t, false))
		want := `nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader exited 9: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."; check the NVIDIA driver (run nvidia-smi)`
		if err == nil || err.Error() != want {
			t.Errorf("wanted %q, got %v", want, err)
		}
	})
	t.Run("a query the tool refuses, and its list", func(t *testing.T) {
		tools(t, map[string]string{"nvidia-smi": "[ \"$1\" = -L ] || { echo 'Field \"uuid\" is not a valid field to query.'; exit 2; }\necho 'GPU 0: NVIDIA B200 (UUID: GPU-b)'\n"})
		ds, err := detectGPUs(ctx, devDir(t, false))
		if want := "0=nvidia/b200"; err != nil || kinds(ds) != want {
			t.Errorf("wanted %q, got %q (%v)", want, kinds(ds), err)
		}
	})
	t.Run("no NVIDIA device, no AMD driver", func(t *testing.T) {
		tools(t, map[string]string{"nvidia-smi": noNvidia, "rocm-smi": "echo 'ERROR:root:Driver not initialized (amdgpu not found in modules)'\nexit 2\n"})
		dev := devDir(t, false)
		_, err := detectGPUs(ctx, dev)
		want := "found no GPU (nvidia-smi: no devices were found; rocm-smi: exited 2; " + dev + "/kfd absent, 0 " + dev + "/dri/renderD* nodes)"
		if err == nil || err.Error() != want {
			t.Errorf("wanted %q, got %v", want, err)
		}
	})
}
