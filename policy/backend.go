package policy

import (
	"fmt"
	"slices"
	"strings"
)

// GPUKind is the GPU vendor of a backend's stages (rules §9).
type GPUKind string

// The GPU kinds.
const (
	// NoGPU is a CPU stage, or a GPU stage run with --gpus none.
	NoGPU GPUKind = "none"
	// NVIDIA GPUs are given to the container by the engine's GPU support.
	NVIDIA GPUKind = "nvidia"
	// AMD GPUs are device nodes (/dev/kfd, /dev/dri) the run steps create.
	AMD GPUKind = "amd"
)

// Ulimit is one resource limit of §9 (docker --ulimit NAME=SOFT:HARD).
type Ulimit struct {
	// Name is the docker name: memlock, stack or nofile.
	Name string `json:"name"`
	// Flag is the bash ulimit flag that sets it (-l, -s, -n).
	Flag string `json:"flag"`
	// Value is the bash ulimit value (unlimited, KiB for stack, a count).
	Value string `json:"value"`
}

// Secret names the stages read (rules §9, §10).
const (
	SecretWandb = "WANDB_API_KEY"
	SecretNeon  = "NEON_DATABASE_URL"
	SecretHF    = "HF_TOKEN"
)

// Timeouts of run_suite.py (rules §5).
const (
	// TimeoutPerFile is run_suite.py's default per-file timeout, in seconds.
	TimeoutPerFile = 1800
	// RetryTimeoutIncrease is what --enable-retry adds to it.
	RetryTimeoutIncrease = 600
)

// Images of rules §1 and §6.
const (
	// CPUImage is the image CPU stages run in: the GitHub-hosted runner's
	// Python 3.11, as a container.
	CPUImage = "python:3.11"
	// DefaultMilesImageTag and DefaultROCmImageTag are the tags the image
	// jobs fall back to.
	DefaultMilesImageTag = "dev"
	DefaultROCmImageTag  = "miles-rocm720-mi35x"
)

// ShmBytes is the GPU stages' --shm-size=32g (rules §9).
const ShmBytes = 32 << 30

// BackendProfile is one backend's row of the backend profile table: the
// facts of the rules that differ by backend, as data, so that the registry,
// the image and dependency jobs, the stage container (stagerun.Build), the
// use cases and the workflow generator read one row instead of each
// branching on cpu, cuda and rocm. A field's zero value is what a backend
// without that feature has (no GPU, no retry, no secrets).
//
// To add a backend: add its Backend constant (registration.go) and its row
// to backendProfiles, with the values of the rules it follows; give it a
// field in BackendSuites (the JSON shape of the suites table); write its
// container steps and add them to stagerun's containerSteps; if its stage
// jobs live in a PR workflow of their own, add that workflow to the
// generator's list (workflows/generate.go); pin the row in
// TestBackendProfiles. What stays code is what the rules name one backend
// for: the ROCm patch (§8), CUDA's GPU generations (§11) and the implicit
// CPU registration of tests/fast/ files (§2).
type BackendProfile struct {
	// Backend is the --hw value (cpu, cuda, rocm).
	Backend Backend
	// Enum is the HWBackend member name Miles prints, e.g. "Hardware:
	// CUDA" in a plan (rules §5) and HWBackend.CUDA in CI_SUITES.
	Enum string
	// RegisterFunc is the registry call that registers a test for the
	// backend (rules §2).
	RegisterFunc string
	// NeedsLabels: a registration must give at least one label (rules §2).
	NeedsLabels bool

	// PRWorkflow is the PR workflow whose stage jobs run the backend, and
	// RunWorkflow the called workflow whose test job makes its container
	// (rules §1, §11.6).
	PRWorkflow, RunWorkflow string
	// Hosted: the stage jobs run on GitHub-hosted ubuntu-latest, so a
	// single-file run names no runner labels (rules §1, §10).
	Hosted bool
	// StageTimeoutMinutes is a stage job's timeout when the checkout's run
	// workflow gives none: Miles 31f1ca9's _run-cpu-ci.yml sets 60; the GPU
	// jobs set none, so GitHub's default 360 applies.
	StageTimeoutMinutes int

	// StageImage is the fixed image a stage runs in; "" when the image job
	// resolves one (rules §1, §9).
	StageImage string
	// ImageRepo is the image family the workflow's image job resolves a tag
	// on, and DefaultImageTag the tag when nothing names one (rules §6).
	ImageRepo, DefaultImageTag string
	// PRImageTag: the image job also reads a called workflow's image_tag,
	// the PR's own image pr-<N> and the PR body's ci-image-tag: line, and a
	// single-file run takes the PR-body tag (rules §6; the CUDA/CPU
	// workflow). Otherwise it reads the dispatch input only.
	PRImageTag bool
	// BakedDeps: the image's own SGLang and Megatron-LM stay unless a
	// dispatch input or PR-body directive names a ref, with no lockfile and
	// no default branch (rules §7). Otherwise both are always installed.
	BakedDeps bool

	// GPU is the GPU vendor, NoGPU for none (rules §9).
	GPU GPUKind
	// VisibleDevices is the variable that splits a host's GPUs, passed
	// through to the run (rules §9); "" for none.
	VisibleDevices string
	// ShmBytes is the size of /dev/shm (0: the engine's default).
	ShmBytes int64
	// Ulimits are the run's resource limits (rules §9).
	Ulimits []Ulimit
	// DataMounts: the run mounts /data/miles_ci's models and datasets
	// folders (rules §9).
	DataMounts bool
	// Privileged: the run step has all root capabilities (rules §9).
	Privileged bool

	// Secrets are what a stage run reads, and FileSecrets what a single-file
	// run reads (rules §9, §10), in the order the workflows pass them.
	Secrets, FileSecrets []string
	// FileRunLast: a single-file run picks the backend's registration only
	// when the file has no registration of another backend (rules §10: the
	// reference runs no ROCm-only file; miles-ci does).
	FileRunLast bool

	// Pytest: the run is one `pytest FILES -v` with a JUnit report; else
	// each file runs as `python3 FILE` with a per-file timeout (rules §5, §10).
	Pytest bool
	// MatchAllOnDispatch: a manual dispatch adds --match-all-labels (rules §1).
	MatchAllOnDispatch bool
	// RetryArgs are what the stage's run_suite.py command line adds, and
	// MaxAttempts how often one file may run (rules §1, §5).
	RetryArgs   []string
	MaxAttempts int
	// FileTimeoutS is the floor of a file's timeout in a stage run:
	// timeout_per_file, plus the retry increase with retry (rules §5);
	// 0: no per-file timeout.
	FileTimeoutS int
}

// gpuUlimits are the GPU jobs' --ulimit options (rules §9).
var gpuUlimits = []Ulimit{
	{Name: "memlock", Flag: "-l", Value: "unlimited"},
	{Name: "stack", Flag: "-s", Value: "65536"}, // 67108864 bytes, in KiB
	{Name: "nofile", Flag: "-n", Value: "65535"},
}

// backendProfiles is the table, one row per backend, in the order the rules
// list the backends (cpu, cuda, rocm).
var backendProfiles = []BackendProfile{
	{
		Backend: CPU, Enum: "CPU", RegisterFunc: "register_cpu_ci",
		PRWorkflow: PRTestWorkflow, RunWorkflow: RunCPUWorkflow, Hosted: true, StageTimeoutMinutes: 60,
		StageImage: CPUImage, ImageRepo: ImageMiles, DefaultImageTag: DefaultMilesImageTag, PRImageTag: true,
		GPU: NoGPU, Secrets: []string{SecretHF}, FileSecrets: []string{SecretHF},
		Pytest: true, MaxAttempts: 1,
	},
	{
		Backend: CUDA, Enum: "CUDA", RegisterFunc: "register_cuda_ci", NeedsLabels: true,
		PRWorkflow: PRTestWorkflow, RunWorkflow: RunCIWorkflow, StageTimeoutMinutes: 360,
		ImageRepo: ImageMiles, DefaultImageTag: DefaultMilesImageTag, PRImageTag: true,
		GPU: NVIDIA, VisibleDevices: "CUDA_VISIBLE_DEVICES", ShmBytes: ShmBytes, Ulimits: gpuUlimits, DataMounts: true, Privileged: true,
		Secrets: []string{SecretWandb, SecretNeon}, FileSecrets: []string{SecretWandb},
		MatchAllOnDispatch: true, MaxAttempts: 1, FileTimeoutS: TimeoutPerFile,
	},
	{
		Backend: ROCM, Enum: "ROCM", RegisterFunc: "register_rocm_ci", NeedsLabels: true,
		PRWorkflow: PRTestROCmWorkflow, RunWorkflow: RunCIROCmWorkflow, StageTimeoutMinutes: 360,
		ImageRepo: ImageROCm, DefaultImageTag: DefaultROCmImageTag, BakedDeps: true,
		GPU: AMD, VisibleDevices: "HIP_VISIBLE_DEVICES", ShmBytes: ShmBytes, Ulimits: gpuUlimits, DataMounts: true, Privileged: true,
		Secrets: []string{SecretWandb}, FileSecrets: []string{SecretWandb}, FileRunLast: true,
		MatchAllOnDispatch: true, RetryArgs: []string{"--enable-retry", "--max-attempts", "2"}, MaxAttempts: 2,
		FileTimeoutS: TimeoutPerFile + RetryTimeoutIncrease,
	},
}

// Backends lists the backends in the table's order (cpu, cuda, rocm).
func Backends() []Backend {
	out := make([]Backend, len(backendProfiles))
	for i, p := range backendProfiles {
		out[i] = p.Backend
	}
	return out
}

// BackendNames are the backends' --hw values, in the table's order.
func BackendNames() []string {
	names := make([]string, len(backendProfiles))
	for i, p := range backendProfiles {
		names[i] = string(p.Backend)
	}
	return names
}

// Profile returns a backend's row (a copy), and false for a backend that
// has none.
func Profile(b Backend) (BackendProfile, bool) {
	for _, p := range backendProfiles {
		if p.Backend == b {
			p.Ulimits = slices.Clone(p.Ulimits)
			p.Secrets, p.FileSecrets = slices.Clone(p.Secrets), slices.Clone(p.FileSecrets)
			p.RetryArgs = slices.Clone(p.RetryArgs)
			return p, true
		}
	}
	return BackendProfile{}, false
}

// ProfileOf returns a backend's row (a copy), or the zero profile (no GPU,
// no image, no secrets) for a backend that has none; use it where the
// backend was checked already.
func ProfileOf(b Backend) BackendProfile {
	p, _ := Profile(b)
	return p
}

// FileCommand is the command a single-file run runs (rules §10).
func (p BackendProfile) FileCommand(file string) []string {
	if p.Pytest {
		return []string{"pytest", file, "-v", "-x"}
	}
	return []string{"python3", file}
}

// backendList is "cpu, cuda, rocm" for messages.
func backendList() string { return strings.Join(BackendNames(), ", ") }

// ParseBackend reads a --hw value.
func ParseBackend(s string) (Backend, error) {
	if p, ok := Profile(Backend(s)); ok {
		return p.Backend, nil
	}
	return "", fmt.Errorf("unknown hardware backend %q; use one of %s", s, backendList())
}
