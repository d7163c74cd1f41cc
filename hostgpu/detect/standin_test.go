package detect

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// standIns puts the stand-in nvidia-smi and rocm-smi of the test images
// (hack/images/files/bin) first on PATH, with MILES_CI_STANDIN_GPUS set to
// gpus: --gpus all detection end to end on a host without GPUs.
func standIns(t *testing.T, gpus string) {
	t.Helper()
	bin := t.TempDir()
	for _, tool := range []string{"nvidia-smi", "rocm-smi"} {
		src, err := filepath.Abs(filepath.Join("..", "..", "hack", "images", "files", "bin", tool))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(src, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	// The stand-ins call sort, cut and wc.
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	t.Setenv("MILES_CI_STANDIN_GPUS", gpus)
}

func TestDetectGPUsOnTheStandIns(t *testing.T) {
	ctx := context.Background()
	t.Run("nvidia, two kinds", func(t *testing.T) {
		standIns(t, "h200:0-3,h100:4-7")
		ds, err := detectGPUs(ctx, devDir(t, false))
		want := "0=nvidia/h200 1=nvidia/h200 2=nvidia/h200 3=nvidia/h200 4=nvidia/h100 5=nvidia/h100 6=nvidia/h100 7=nvidia/h100"
		if err != nil || kinds(ds) != want {
			t.Fatalf("wanted %q, got %q (%v)", want, kinds(ds), err)
		}
		if ds[4].Name != "NVIDIA H100 80GB HBM3" || ds[4].UUID != "GPU-00000000-0000-4000-8000-000000000004" {
			t.Errorf("wanted GPU 4's name and uuid, got %+v", ds[4])
		}
	})
	t.Run("amd", func(t *testing.T) {
		standIns(t, "mi350:0-3")
		ds, err := detectGPUs(ctx, devDir(t, true))
		want := "0=amd/mi350 1=amd/mi350 2=amd/mi350 3=amd/mi350"
		if err != nil || kinds(ds) != want {
			t.Fatalf("wanted %q, got %q (%v)", want, kinds(ds), err)
		}
		if ds[0].Name != "AMD Instinct MI355X" || ds[0].UUID != "0x5c00000000000000" {
			t.Errorf("wanted GPU 0's name and unique id, got %+v", ds[0])
		}
	})
}
