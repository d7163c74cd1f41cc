//go:build e2e

// Package e2e holds end-to-end tests that need a running Dagger engine (see
// hack/engine/engine.sh); hack/e2e.sh runs them with -tags e2e.
package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"dagger.io/dagger"
)

// connect opens a session with the engine named by the environment
// (_EXPERIMENTAL_DAGGER_RUNNER_HOST, as `engine.sh env` prints it).
func connect(t *testing.T) (*dagger.Client, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	c, err := dagger.Connect(ctx, dagger.WithLogOutput(os.Stderr))
	if err != nil {
		t.Fatalf("connect to the engine: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ctx
}

// run executes script with sh in a container of image and returns its stdout.
func run(ctx context.Context, c *dagger.Client, image, script string) (string, error) {
	return c.Container().From(image).
		WithEnvVariable("CACHE_BUSTER", time.Now().String()).
		WithExec([]string{"sh", "-euc", script}).
		Stdout(ctx)
}

// gitFetchScript fetches the branches the CUDA stage step fetches, plus a tag and a
// pull-request ref, and checks both dependency packages import.
const gitFetchScript = `
cd /sgl-workspace/sglang
git reset --hard HEAD && git clean -fd
git fetch origin sglang-miles && git checkout -f FETCH_HEAD
git fetch origin refs/pull/1234/head && git fetch origin v0.5.0
cd /root/Megatron-LM
git reset --hard HEAD && git clean -fd
git fetch origin miles-main && git checkout -f FETCH_HEAD
git fetch origin refs/pull/101/head && git fetch origin rocm-patched rocm-conflict
cd /
PYTHONPATH=/sgl-workspace/sglang/python:/root/Megatron-LM python3 -c 'import sglang, megatron.core, megatron.training; print("imports ok", sglang.__version__, megatron.core.__version__)'
`

func TestImages(t *testing.T) {
	t.Parallel()
	c, ctx := connect(t)
	for _, tc := range []struct {
		image, smi, smiWant string
	}{
		{"radixark/miles:dev", "nvidia-smi -L", "GPU 0: NVIDIA H200 (UUID: GPU-"},
		{"rocm/sgl-dev:miles-rocm720-mi35x", "rocm-smi --showproductname", "Card Series:"},
	} {
		t.Run(tc.image, func(t *testing.T) {
			t.Parallel()
			t.Run("git fetch", func(t *testing.T) {
				out, err := run(ctx, c, tc.image, gitFetchScript)
				if err != nil {
					t.Fatalf("wanted the dependency refs to fetch offline, got %v", err)
				}
				if !strings.Contains(out, "imports ok") {
					t.Fatalf("wanted %q in the output, got %q", "imports ok", out)
				}
			})
			t.Run("gpu tool", func(t *testing.T) {
				out, err := run(ctx, c, tc.image, tc.smi)
				if err != nil || !strings.Contains(out, tc.smiWant) {
					t.Fatalf("wanted %q from %s, got %q (err %v)", tc.smiWant, tc.smi, out, err)
				}
			})
			// Miles' run_suite.py runs `ray stop --force` before each file in CI;
			// the real images ship Ray, so the stand-ins must answer it.
			t.Run("ray stop", func(t *testing.T) {
				out, err := run(ctx, c, tc.image, "ray stop --force")
				if err != nil || !strings.Contains(out, "Stopped all 0 Ray processes.") {
					t.Fatalf("wanted %q from ray stop --force, got %q (err %v)", "Stopped all 0 Ray processes.", out, err)
				}
			})
			t.Run("pip offline", func(t *testing.T) {
				out, err := run(ctx, c, tc.image, `
pip install polars zstandard xxhash blake3 numba==0.65.1
cd /sgl-workspace/sglang && pip install -e python --no-deps --break-system-packages
cd /root/Megatron-LM && pip install -e . --no-deps
cd / && python3 -c 'import numba, polars, sglang, megatron.core; print("pip ok", numba.__version__)'
`)
				if err != nil || !strings.Contains(out, "pip ok 0.65.1") {
					t.Fatalf("wanted the stage's pip installs to work offline, got %q (err %v)", out, err)
				}
			})
		})
	}
	t.Run("rocm patch states", func(t *testing.T) {
		t.Parallel()
		out, err := run(ctx, c, "rocm/sgl-dev:miles-rocm720-mi35x", `
cd /root/Megatron-LM
p=/opt/miles-ci/megatron.patch
git fetch -q origin miles-main && git checkout -qf FETCH_HEAD && git apply --check $p && echo clean-applies
git fetch -q origin rocm-patched && git checkout -qf FETCH_HEAD && git apply --reverse --check $p && echo already-applied
git fetch -q origin rocm-conflict && git checkout -qf FETCH_HEAD
if git apply --check $p 2>/dev/null || git apply --reverse --check $p 2>/dev/null; then echo unexpected; else echo conflicts; fi
`)
		want := "clean-applies\nalready-applied\nconflicts\n"
		if err != nil || out != want {
			t.Fatalf("wanted %q, got %q (err %v)", want, out, err)
		}
	})
	t.Run("python:3.11", func(t *testing.T) {
		t.Parallel()
		out, err := run(ctx, c, "python:3.11", `
python --version
uv pip install --system polars zstandard
helm version
python -c 'import polars; print("uv ok", polars.__version__)'
`)
		if err != nil || !strings.Contains(out, "Python 3.11") || !strings.Contains(out, "uv ok") ||
			!strings.Contains(out, `Version:"v4.2.3"`) {
			t.Fatalf("wanted Python 3.11, uv and helm stand-ins, got %q (err %v)", out, err)
		}
	})
}

// TestStandInGPUTools runs the repository's stand-in nvidia-smi and rocm-smi
// (hack/images/files/bin) in the images' own userland (dash, coreutils), on
// the forms Miles' workflows, gpu-wait.sh and --gpus all read, byte for
// byte. They are mounted over the images' copies, so this holds whichever
// build of the images the engine serves.
func TestStandInGPUTools(t *testing.T) {
	t.Parallel()
	c, ctx := connect(t)
	for _, tc := range []struct {
		image, tool, script, want string
	}{
		{"radixark/miles:dev", "nvidia-smi", `nvidia-smi -L | head -n 2
nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader | tail -n 1
MILES_CI_STANDIN_GPUS=h200:0-1,h100:2 nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader
MILES_CI_STANDIN_GPUS=h200:0 nvidia-smi topo -m | head -n 2
MILES_CI_STANDIN_GPUS=mi350:0-3 nvidia-smi -L || echo "exit $?"`,
			"GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-4000-8000-000000000000)\n" +
				"GPU 1: NVIDIA H200 (UUID: GPU-00000000-0000-4000-8000-000000000001)\n" +
				"7, NVIDIA H200, 0 MiB\n" +
				"0, NVIDIA H200, GPU-00000000-0000-4000-8000-000000000000\n" +
				"1, NVIDIA H200, GPU-00000000-0000-4000-8000-000000000001\n" +
				"2, NVIDIA H100 80GB HBM3, GPU-00000000-0000-4000-8000-000000000002\n" +
				"\t\x1b[4mGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n" +
				"GPU0\t X \t0-15\t0\t\tN/A\n" +
				"No devices were found\nexit 6\n"},
		{"rocm/sgl-dev:miles-rocm720-mi35x", "rocm-smi", `rocm-smi --showproductname | grep 'GPU\[7\].*Card Series'
MILES_CI_STANDIN_GPUS=mi350:0-1 rocm-smi --showproductname --showuniqueid | grep -E '^GPU.*(Card Series|Unique ID)'`,
			"GPU[7]\t\t: Card Series: \t\tAMD Instinct MI355X\n" +
				"GPU[0]\t\t: Card Series: \t\tAMD Instinct MI355X\n" +
				"GPU[1]\t\t: Card Series: \t\tAMD Instinct MI355X\n" +
				"GPU[0]\t\t: Unique ID: 0x5c00000000000000\n" +
				"GPU[1]\t\t: Unique ID: 0x5c00000000000001\n"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			t.Parallel()
			out, err := c.Container().From(tc.image).
				WithFile("/usr/local/bin/"+tc.tool, c.Host().File("../images/files/bin/"+tc.tool), dagger.ContainerWithFileOpts{Permissions: 0o755}).
				WithEnvVariable("CACHE_BUSTER", time.Now().String()).
				WithExec([]string{"sh", "-c", tc.script}).
				Stdout(ctx)
			if err != nil || out != tc.want {
				t.Fatalf("wanted %q, got %q (err %v)", tc.want, out, err)
			}
		})
	}
}

// TestIsolation checks that a container has no route off the machine. It uses
// 192.0.2.1 (TEST-NET-1, reserved for documentation and never routed) and a
// public name, so even a leak could reach no real host.
func TestIsolation(t *testing.T) {
	t.Parallel()
	c, ctx := connect(t)
	out, err := run(ctx, c, "python:3.11", `
python3 - <<'PY'
import socket
for target in [("192.0.2.1", 80), ("pypi.org", 443)]:
    try:
        socket.create_connection(target, timeout=5).close()
        print("REACHED", target)
    except OSError as e:
        print("blocked", target[0], type(e).__name__)
PY
`)
	if err != nil {
		t.Fatalf("isolation probe did not run: %v", err)
	}
	if strings.Contains(out, "REACHED") || strings.Count(out, "blocked") != 2 {
		t.Fatalf("wanted every outside connection blocked, got %q", out)
	}
	t.Log(strings.TrimSpace(out))
}
