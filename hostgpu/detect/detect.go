// Package detect reads this machine's GPUs for --gpus all: it runs the
// vendor tools (nvidia-smi, rocm-smi), bounded in time and output, and
// hands what they print to package hostgpu. It is infrastructure, as the
// engine adapter and the stores are: the use cases take its answer as a
// cirun.Detect (the front ends hand them GPUs), and tests hand them fakes.
package detect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/radixark/miles-ci/hostgpu"
	"github.com/radixark/miles-ci/internal/hostexec"
)

// The vendor tools' bounds: nvidia-smi takes seconds on a host whose GPUs are
// not in persistence mode; either printing more than the parsers read is
// refused.
const (
	gpuToolTimeout = 30 * time.Second
	gpuToolOutput  = hostgpu.MaxInput
)

// The commands --gpus all runs, in this order.
var (
	nvidiaQuery = []string{"nvidia-smi", "--query-gpu=index,name,uuid", "--format=csv,noheader"}
	nvidiaList  = []string{"nvidia-smi", "-L"}
	rocmQuery   = []string{"rocm-smi", "--showproductname", "--showuniqueid"}
)

// GPUs reads the host's GPUs for --gpus all: NVIDIA's through
// `nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader` (its -L list
// when the query fails), then AMD's through `rocm-smi --showproductname
// --showuniqueid`, which count only with /dev/kfd and a /dev/dri/renderD*
// node (what a container needs to reach them). The first vendor that lists a
// GPU gives the host's devices. A host with none, or whose tools fail, is an
// error naming each tool tried and what it said; the caller adds the way
// around it (cirun.ParseHost: give the devices, or none).
func GPUs(ctx context.Context) ([]hostgpu.Device, error) {
	return detectGPUs(ctx, "/dev")
}

// detectGPUs is GPUs with the device folder given, for tests.
func detectGPUs(ctx context.Context, dev string) ([]hostgpu.Device, error) {
	var tried []string
	ds, note, err := detectNvidia(ctx)
	if err != nil || len(ds) > 0 {
		return ds, err
	}
	tried = append(tried, note)
	ds, note, err = detectAMD(ctx, dev)
	if err != nil || len(ds) > 0 {
		return ds, err
	}
	tried = append(tried, note)
	return nil, fmt.Errorf("found no GPU (%s)", strings.Join(tried, "; "))
}

// detectNvidia lists the NVIDIA GPUs; with none, note says what was seen.
func detectNvidia(ctx context.Context) (ds []hostgpu.Device, note string, err error) {
	res, err := hostexec.Output(ctx, nvidiaQuery, gpuToolTimeout, gpuToolOutput)
	switch {
	case errors.Is(err, hostexec.ErrNotFound):
		return nil, "nvidia-smi: not on PATH", nil
	case err != nil:
		return nil, "", fmt.Errorf("%s: %w", strings.Join(nvidiaQuery, " "), err)
	case res.ExitCode == 0:
		ds, err := hostgpu.ParseNvidiaQuery(res.Stdout)
		if err != nil {
			return nil, "", err
		}
		return ds, "nvidia-smi: no devices were found", nil
	case noDevices(res):
		// nvidia-smi's exit 6: the driver is loaded and sees no GPU.
		return nil, "nvidia-smi: no devices were found", nil
	}
	// The query failed (an older nvidia-smi, a field it does not know): its
	// -L list is the fallback.
	query := fmt.Sprintf("%s exited %d: %s", strings.Join(nvidiaQuery, " "), res.ExitCode, toolSaid(res))
	list, err := hostexec.Output(ctx, nvidiaList, gpuToolTimeout, gpuToolOutput)
	if err == nil && list.ExitCode == 0 {
		if ds, perr := hostgpu.ParseNvidiaList(list.Stdout); perr == nil && len(ds) > 0 {
			return ds, "", nil
		}
	}
	return nil, "", fmt.Errorf("%s; check the NVIDIA driver (run nvidia-smi)", query)
}

// detectAMD lists the AMD GPUs; with none, note says what was seen.
func detectAMD(ctx context.Context, dev string) (ds []hostgpu.Device, note string, err error) {
	kfd := exists(filepath.Join(dev, "kfd"))
	renders, _ := filepath.Glob(filepath.Join(dev, "dri", "renderD*"))
	nodes := fmt.Sprintf("%s %s, %d %s nodes", filepath.Join(dev, "kfd"), present(kfd), len(renders), filepath.Join(dev, "dri", "renderD*"))
	res, err := hostexec.Output(ctx, rocmQuery, gpuToolTimeout, gpuToolOutput)
	switch {
	case errors.Is(err, hostexec.ErrNotFound):
		if kfd {
			return nil, "", fmt.Errorf("%s, but rocm-smi is not on PATH; install ROCm's rocm-smi", nodes)
		}
		return nil, "rocm-smi: not on PATH; " + nodes, nil
	case err != nil:
		return nil, "", fmt.Errorf("%s: %w", strings.Join(rocmQuery, " "), err)
	case res.ExitCode != 0:
		if !kfd {
			return nil, fmt.Sprintf("rocm-smi: exited %d; %s", res.ExitCode, nodes), nil
		}
		return nil, "", fmt.Errorf("%s exited %d: %s; check the amdgpu driver (run rocm-smi)", strings.Join(rocmQuery, " "), res.ExitCode, toolSaid(res))
	}
	ds, err = hostgpu.ParseRocmSmi(res.Stdout)
	if err != nil {
		return nil, "", err
	}
	if len(ds) == 0 {
		return nil, "rocm-smi: no GPU listed; " + nodes, nil
	}
	if !kfd || len(renders) == 0 {
		return nil, "", fmt.Errorf("rocm-smi lists %d AMD GPUs but %s: a container cannot reach them without both; load the amdgpu driver", len(ds), nodes)
	}
	return ds, "", nil
}

// noDevices is nvidia-smi's answer on a host whose driver sees no GPU.
func noDevices(res hostexec.Result) bool {
	return strings.Contains(string(res.Stdout)+string(res.Stderr), "No devices were found")
}

// toolSaid is the first line a failed tool printed, for its error.
func toolSaid(res hostexec.Result) string {
	s := strings.TrimSpace(string(res.Stderr))
	if s == "" {
		s = strings.TrimSpace(string(res.Stdout))
	}
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "..."
	}
	if s == "" {
		return "(no output)"
	}
	return fmt.Sprintf("%q", s)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func present(ok bool) string {
	if ok {
		return "present"
	}
	return "absent"
}

// Here is GPUs as the use cases take it (cirun.Detect), on this machine
// and without a deadline of its own (each tool has its bound).
func Here() ([]hostgpu.Device, error) { return GPUs(context.Background()) }
