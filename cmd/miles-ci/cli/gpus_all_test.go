package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// standInTools puts the test images' stand-in nvidia-smi and rocm-smi
// (hack/images/files/bin) first on PATH, their GPUs set to gpus.
func standInTools(t *testing.T, gpus string) {
	t.Helper()
	bin := t.TempDir()
	for _, tool := range []string{"nvidia-smi", "rocm-smi"} {
		src, err := filepath.Abs(filepath.Join("..", "..", "..", "hack", "images", "files", "bin", tool))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(src, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	t.Setenv("MILES_CI_STANDIN_GPUS", gpus)
}

// TestCIGPUsAllReadsTheHost: --gpus all asks the vendor tools (here the
// stand-ins on PATH) for the host's GPUs and their models, and the graph
// schedules on what they said.
func TestCIGPUsAllReadsTheHost(t *testing.T) {
	standInTools(t, "h200:0-3,h100:4-7")
	code, stdout, stderr := runCLI(t, nil, "ci", "--dry-run", "--repo", milesRepo(), "--event", "pull_request", "--pr-labels-json", `["run-ci-megatron"]`,
		"--changed-files", filepath.Join(milesRepo(), "diffs", "cpu_only.z"), "--gpus", "all")
	if code != 125 {
		t.Fatalf("wanted exit 125 (the 8-GPU H200 and the MI350 shards cannot run), got %d: %s", code, stderr)
	}
	for _, want := range []string{
		"pull_request on radixark/miles (--gpus h200:0-3,h100:4-7)\n",
		"needs 8 H200 GPUs; this host has 4 H200, 4 H100 (--gpus h200:0-3,h100:4-7)",
		"needs 4 MI350 GPUs; this host has 4 H200, 4 H100 (--gpus h200:0-3,h100:4-7)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("wanted %q in\n%s", want, stdout)
		}
	}

	standInTools(t, "mi350:0-7")
	t.Setenv("PATH", t.TempDir())
	code, _, stderr = runCLI(t, nil, "ci", "--dry-run", "--repo", milesRepo(), "--event", "pull_request", "--gpus", "all")
	want := "--gpus all: found no GPU (nvidia-smi: not on PATH; rocm-smi: not on PATH; "
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("wanted exit 2 and %q, got %d: %s", want, code, stderr)
	}
}
