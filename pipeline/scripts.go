package pipeline

// The fixed scripts of a stage container. Each runs as
// `bash -c SCRIPT NAME ARG...`: the script text never changes, and every value
// that comes from a request (a path, a version, a command) arrives as a
// positional argument, so no user input is ever parsed as shell. The plan
// script writes to ResultsDir; MILES_CI_RESULTS moves it (the unit tests
// run it on the host). The run step is the Python run wrapper (wrapper.go).

// rocmDevicesFn creates the AMD GPU device nodes of the host in this exec's
// /dev, from the major:minor numbers sysfs shows. Docker's --device does this
// for the workflow; Dagger has no device API, and every exec gets a fresh /dev,
// so each exec that needs the GPUs runs it (with all root capabilities).
const rocmDevicesFn = `rocm_devices() {
	local d n ma mi
	if [ -r /sys/class/kfd/kfd/dev ] && [ ! -e /dev/kfd ]; then
		IFS=: read -r ma mi </sys/class/kfd/kfd/dev
		mknod -m 666 /dev/kfd c "$ma" "$mi"
	fi
	mkdir -p /dev/dri
	for d in /sys/class/drm/card* /sys/class/drm/renderD*; do
		[ -r "$d/dev" ] || continue
		n=/dev/dri/${d##*/}
		[ -e "$n" ] && continue
		IFS=: read -r ma mi <"$d/dev"
		mknod -m 666 "$n" c "$ma" "$mi"
	done
}
`

// gpuWaitScript waits until the GPUs answer, as the workflows' "Wait for GPU"
// step does: 60 tries, 2 s apart. $1 is nvidia or amd.
const gpuWaitScript = rocmDevicesFn + `set -u
kind=$1
if [ "$kind" = amd ]; then rocm_devices; fi
for i in $(seq 1 60); do
	if [ "$kind" = nvidia ] && nvidia-smi -L >/dev/null 2>&1; then
		nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader
		exit 0
	fi
	if [ "$kind" = amd ] && rocm-smi --showproductname >/dev/null 2>&1; then
		rocm-smi --showproductname
		exit 0
	fi
	echo "waiting for the GPUs ($i/60)"
	sleep 2
done
echo "::error::the GPUs did not answer in 120 s; check the host's driver and that the engine has GPU support (or run with --gpus none)" >&2
exit 1
`

// planScript prints the in-container plan and keeps a copy in plan.txt; it
// fails the way the plan command fails.
const planScript = `set -o pipefail
results=${MILES_CI_RESULTS:-/results}
mkdir -p "$results"
"$@" | tee "$results/plan.txt"
`

// reconcileScript installs requirements.txt ($1) as the CUDA workflow does:
// it records the nvidia-cudnn versions the image ships, installs, and puts
// back any cudnn version the install changed.
const reconcileScript = `set -euo pipefail
req=$1
pins=(nvidia-cudnn-cu13 nvidia-cudnn-cu12)
# pip show exits 1 for a package that is not installed: that is a version of "".
version() { python -m pip show "$1" 2>/dev/null | sed -n 's/^Version: //p' || true; }
declare -A before
for p in "${pins[@]}"; do before[$p]=$(version "$p"); done
python -m pip install -r "$req" --break-system-packages
for p in "${pins[@]}"; do
	now=$(version "$p")
	if [ -n "${before[$p]}" ] && [ "$now" != "${before[$p]}" ]; then
		echo "requirements.txt changed $p from ${before[$p]} to ${now:-nothing}; putting ${before[$p]} back"
		python -m pip install --no-deps --break-system-packages "$p==${before[$p]}"
	fi
done
`

// rocmToolchainScript is the ROCm workflow's toolchain step before it
// installs a named dependency: rustup's stable toolchain and protoc.
const rocmToolchainScript = `set -euo pipefail
if command -v rustup >/dev/null 2>&1; then rustup default stable; fi
if ! command -v protoc >/dev/null 2>&1; then
	apt-get update
	apt-get install -y protobuf-compiler
fi
rustc --version
protoc --version
`

// cpuToolsScript gives a bare Python image what the CPU workflow's setup
// actions give the runner: uv, and helm at version $1.
const cpuToolsScript = `set -euo pipefail
if ! command -v uv >/dev/null 2>&1; then python -m pip install uv; fi
if ! command -v helm >/dev/null 2>&1; then
	arch=$(uname -m)
	case $arch in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; esac
	tmp=$(mktemp -d)
	curl -fsSL "https://get.helm.sh/helm-$1-linux-$arch.tar.gz" | tar -xz -C "$tmp"
	install "$tmp/linux-$arch/helm" /usr/local/bin/helm
	rm -rf "$tmp"
fi
uv --version
helm version
`

// stampScript writes a fresh random id to LayersDir/$1.
const stampScript = `mkdir -p /opt/miles-ci/layers && cat /proc/sys/kernel/random/uuid >"/opt/miles-ci/layers/$1"
`

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
