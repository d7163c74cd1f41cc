package stagerun

import _ "embed"

// The fixed scripts of a stage container, embedded from scripts/ (hack/test.sh
// runs shellcheck over them). Each runs as `bash -c SCRIPT NAME ARG...`: the
// script text never changes, and every value that comes from a request (a
// path, a version, a command) arrives as a positional argument, so no user
// input is ever parsed as shell. The plan script writes to ResultsDir;
// MILES_CI_RESULTS moves it (the unit tests run it on the host). The run step
// is the Python run wrapper (wrapper.go, scripts/run-wrapper.py).

// rocmDevicesFn creates the AMD GPU device nodes of the host in this exec's
// /dev, from the major:minor numbers sysfs shows. Docker's --device does this
// for the workflow; Dagger has no device API, and every exec gets a fresh /dev,
// so each exec that needs the GPUs runs it (with all root capabilities).
//
//go:embed scripts/rocm-devices.sh
var rocmDevicesFn string

// gpuWaitBody waits until the GPUs answer, as the workflows' "Wait for GPU"
// step does: 60 tries, 2 s apart. $1 is nvidia or amd. It runs after
// rocmDevicesFn (gpuWaitScript).
//
//go:embed scripts/gpu-wait.sh
var gpuWaitBody string

// gpuWaitScript is the gpu-wait script: rocm_devices, then the wait.
var gpuWaitScript = rocmDevicesFn + gpuWaitBody

// planScript prints the in-container plan and keeps a copy in plan.txt; it
// fails the way the plan command fails.
//
//go:embed scripts/plan.sh
var planScript string

// reconcileScript installs requirements.txt ($1) as the CUDA workflow does:
// it records the nvidia-cudnn versions the image ships, installs, and puts
// back any cudnn version the install changed.
//
//go:embed scripts/reconcile.sh
var reconcileScript string

// rocmToolchainScript is the ROCm workflow's toolchain step before it
// installs a named dependency: rustup's stable toolchain and protoc.
//
//go:embed scripts/rocm-toolchain.sh
var rocmToolchainScript string

// cpuToolsScript gives a bare Python image what the CPU workflow's setup
// actions give the runner: uv, and helm at version $1.
//
//go:embed scripts/cpu-tools.sh
var cpuToolsScript string

// stampScript writes a fresh random id to /opt/miles-ci/layers/$1, the
// layer stamp of phase $1 (see builder.stamps).
//
//go:embed scripts/stamp.sh
var stampScript string

// scripts holds the fixed scripts by name.
var scripts = map[string]string{
	"gpu-wait":       gpuWaitScript,
	"plan":           planScript,
	"reconcile":      reconcileScript,
	"rocm-toolchain": rocmToolchainScript,
	"cpu-tools":      cpuToolsScript,
	"stamp":          stampScript,
}

// ScriptNames lists the fixed scripts, sorted.
var ScriptNames = []string{"cpu-tools", "gpu-wait", "plan", "reconcile", "rocm-toolchain", "stamp"}

// Script returns the text of a fixed script ("" for an unknown name).
func Script(name string) string { return scripts[name] }

// script is the argv that runs a fixed script with its arguments.
func script(name string, args ...string) []string {
	return append([]string{"bash", "-c", scripts[name], name}, args...)
}
