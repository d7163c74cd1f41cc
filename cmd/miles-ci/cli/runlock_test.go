package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/hostlock"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// TestRunStoppedWhileWaitingForGPUs: a run that waits for GPUs another
// process holds and is stopped by SIGINT exits 130, as a run stopped later
// does (issue 38 item 7: it exited 125), and never reaches the engine; its
// --visible-devices 00 waited for the holder of device 0.
func TestRunStoppedWhileWaitingForGPUs(t *testing.T) {
	defer func(old func(context.Context, stagerun.Request, engine.Inputs, string, io.Writer, *report.Masker, func(string)) (stagerun.Result, error)) {
		engineRun = old
	}(engineRun)
	ran := false
	engineRun = func(context.Context, stagerun.Request, engine.Inputs, string, io.Writer, *report.Masker, func(string)) (stagerun.Result, error) {
		ran = true
		return stagerun.Result{}, nil
	}
	dir := t.TempDir()
	lock := hostlock.New(dir, []string{"the holder"})
	release, _, ok, err := lock.TryLease(cirun.Host{StandIn: true, Devices: device.Set{"0"}}, device.Set{"0"})
	if !ok || err != nil {
		t.Fatalf("wanted the holder's lease, got ok=%v %v", ok, err)
	}
	defer release()
	go func() {
		time.Sleep(1500 * time.Millisecond)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}()
	code, _, stderr := runCLI(t, nil, "run", "--repo", milesRepo(), "--stage", "stage-b-2-gpu-h200", "--gpus", "none", "--visible-devices", "00",
		"--lock-dir", dir, "--results", filepath.Join(t.TempDir(), "results"), "--quiet")
	if code != ExitInterrupted || ran || !strings.Contains(stderr, "waiting for GPUs 0, held by pid") || !strings.Contains(stderr, "interrupted (SIGINT or SIGTERM): stopped while waiting for GPUs 0") {
		t.Errorf("wanted exit 130 after waiting for device 0, no run, got %d (ran %v)\n%s", code, ran, stderr)
	}
}
