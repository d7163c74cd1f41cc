package stagerun

import (
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/policy"
)

// Phase groups the steps of a stage container by how often their inputs
// change; the phases run in this order, so a change to a later phase's input
// re-runs no step of an earlier phase.
type Phase string

// The phases of a stage container, in layer order.
const (
	// PhaseBase is the image, its static environment, the cache volumes and
	// the tools every run needs.
	PhaseBase Phase = "base"
	// PhaseRequirements copies the requirements files alone and installs them.
	PhaseRequirements Phase = "requirements"
	// PhaseDeps moves the SGLang and Megatron-LM checkouts to resolved commit
	// ids, patches and installs them.
	PhaseDeps Phase = "deps"
	// PhaseSource copies the Miles checkout in and runs what reads it.
	PhaseSource Phase = "source"
	// PhaseRun is per run: GPUs, secrets, a run nonce, the plan and the run.
	PhaseRun Phase = "run"
)

// Phases lists the phases in layer order.
var Phases = []Phase{PhaseBase, PhaseRequirements, PhaseDeps, PhaseSource, PhaseRun}

// StepKind says what a step does to the container.
type StepKind string

// The step kinds.
const (
	// KindExec runs Argv.
	KindExec StepKind = "exec"
	// KindSource copies the whole Miles checkout to the workspace.
	KindSource StepKind = "source"
	// KindPatch is the ROCm patch decision of rules §8: Patch.Check, then
	// Patch.ReverseCheck, then Patch.Apply or an error.
	KindPatch StepKind = "patch"
)

// Role marks the run-phase steps a test run drives itself.
type Role string

// The roles of run-phase steps.
const (
	// RoleGPUWait waits until the GPUs answer; it runs on every test run.
	RoleGPUWait Role = "gpu-wait"
	// RolePlan prints the in-container plan (run_suite.py --list-only) to PlanPath.
	RolePlan Role = "plan"
	// RoleRun runs the tests; it always exits 0 and writes ResultsDir.
	RoleRun Role = "run"
)

// Paths inside a stage container.
const (
	// Workspace is where the Miles checkout goes, as in a GitHub container job.
	Workspace = "/__w/miles/miles"
	// ResultsDir is where the runner writes its own files (pytest's
	// junit.xml, the step summary); the tests can write there too, so
	// miles-ci reads them after the run as untrusted input, and the results
	// folder it hands back is its own (see Result.Files).
	ResultsDir = "/results"
	// JUnitPath is the JUnit XML report (pytest writes it for CPU stages).
	JUnitPath = ResultsDir + "/junit.xml"
	// StepSummaryPath is GITHUB_STEP_SUMMARY in the run step.
	StepSummaryPath = ResultsDir + "/step-summary.md"
	// GateRecordDir is MILES_CI_GATE_RECORD_DIR in a CUDA stage run: where
	// the harness writes each attempt's metric records (rules §16).
	GateRecordDir = "/tmp/miles-ci-gate"
	// RunIDEnv carries the run nonce: it changes per test run, so the run
	// steps after it never come from the cache.
	RunIDEnv = "MILES_CI_RUN_ID"
)

// Step is one ordered step of a stage container.
type Step struct {
	// Name says what the step is for, e.g. "sync sglang: git fetch".
	Name string `json:"name"`
	// Phase is the layer group the step belongs to.
	Phase Phase `json:"phase"`
	// Kind is exec, source or patch.
	Kind StepKind `json:"kind"`
	// Role marks the run-phase steps (gpu-wait, plan, run); "" otherwise.
	Role Role `json:"role,omitempty"`
	// Workdir is the working directory of the command.
	Workdir string `json:"workdir,omitempty"`
	// Argv is the command; never a shell string built from user input (the
	// fixed scripts take their data as positional arguments).
	Argv []string `json:"argv,omitempty"`
	// Env is set for this step only.
	Env []EnvVar `json:"env,omitempty"`
	// Files are files of the Miles checkout copied in, alone, before the step
	// runs, so the step's cache key depends on them and nothing else.
	Files []SourceFile `json:"files,omitempty"`
	// Privileged runs the command with all root capabilities (docker --privileged).
	Privileged bool `json:"privileged,omitempty"`
	// Patch is the §8 decision of a patch step.
	Patch *PatchStep `json:"patch,omitempty"`
}

// PatchStep is the ROCm patch decision: the argv lists come from deps.NewPatchPlan.
type PatchStep struct {
	// Ref names the Megatron-LM ref in messages.
	Ref string `json:"ref"`
	// Patch is the patch file as git is given it.
	Patch string `json:"patch"`
	// Check is `git apply --check PATCH`.
	Check []string `json:"check"`
	// ReverseCheck is `git apply --reverse --check PATCH`.
	ReverseCheck []string `json:"reverse_check"`
	// Apply is `git apply PATCH`, run when Check passed.
	Apply []string `json:"apply"`
}

// SourceFile copies one file of the Miles checkout into the container.
type SourceFile struct {
	// Path is the repo-relative file.
	Path string `json:"path"`
	// Dest is where it goes in the container.
	Dest string `json:"dest"`
}

// EnvVar is one environment variable.
type EnvVar struct {
	// Name is the variable name.
	Name string `json:"name"`
	// Value is its value.
	Value string `json:"value"`
}

// CacheSharing is how concurrent runs share a cache volume.
type CacheSharing string

// The sharing modes of Dagger cache volumes.
const (
	// Shared lets concurrent runs use the volume at once.
	Shared CacheSharing = "SHARED"
	// Locked lets one run at a time use the volume (apt takes its own lock
	// and fails when it is contended).
	Locked CacheSharing = "LOCKED"
)

// Cache is a cache volume mounted for every step.
type Cache struct {
	// Key names the volume; runs with the same key share its contents.
	Key string `json:"key"`
	// Path is the mount point.
	Path string `json:"path"`
	// Sharing is SHARED or LOCKED.
	Sharing CacheSharing `json:"sharing"`
}

// GPUKind is the GPU vendor of a stage (a backend profile's GPU).
type GPUKind = policy.GPUKind

// The GPU kinds.
const (
	// NoGPU is a CPU stage, or a GPU stage run with --gpus none.
	NoGPU = policy.NoGPU
	// NVIDIA GPUs are given to the container by the engine's GPU support.
	NVIDIA = policy.NVIDIA
	// AMD GPUs are device nodes (/dev/kfd, /dev/dri) the run steps create.
	AMD = policy.AMD
)

// GPU is how the container sees GPUs.
type GPU struct {
	// Kind is nvidia, amd or none.
	Kind GPUKind `json:"kind"`
	// Devices are the engine-side device ids given to the container; empty
	// means all (--gpus all).
	Devices device.Set `json:"devices"`
	// VisibleEnv is CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES.
	VisibleEnv string `json:"visible_env,omitempty"`
	// Visible is its value, "" when not set (the host's split of the GPUs).
	Visible string `json:"visible,omitempty"`
}

// Ulimit is one resource limit of §9 (docker --ulimit NAME=SOFT:HARD; a
// backend profile's Ulimits).
type Ulimit = policy.Ulimit

// DataName names a host data folder a GPU stage mounts.
type DataName string

// The data folders of /data/miles_ci.
const (
	// Models is /data/miles_ci/models.
	Models DataName = "models"
	// Datasets is /data/miles_ci/datasets.
	Datasets DataName = "datasets"
)

// DataMount mounts a data folder (a Directory argument) at each of Paths.
type DataMount struct {
	// Name is models or datasets.
	Name DataName `json:"name"`
	// Paths are the mount points.
	Paths []string `json:"paths"`
}

// ResolveStep finds the commit a moving dependency ref names, with an
// uncached `git ls-remote`, before the cached chain is built.
type ResolveStep struct {
	// Dependency is sglang or megatron.
	Dependency string `json:"dependency"`
	// Ref is the ref as named, and Origin where it was named (e.g. "pr-body line 5").
	Ref    string `json:"ref"`
	Origin string `json:"origin"`
	// Fetch is the ref as git fetch would be given it.
	Fetch string `json:"fetch"`
	// Workdir is where the command runs.
	Workdir string `json:"workdir,omitempty"`
	// Argv is `git ls-remote REMOTE FETCH`.
	Argv []string `json:"argv"`
}

// ExpectedTest is a test file the run should report on.
type ExpectedTest struct {
	// File is the repo-relative test file.
	File string `json:"file"`
	// TimeoutS is the file's timeout in seconds; nil when the runner has none
	// per file (CPU stages run one pytest).
	TimeoutS *int `json:"timeout_s"`
	// EstTime is the file's registered est_time in seconds (0 when the
	// plan came from the container's own --list-only), for the results.
	EstTime float64 `json:"-"`
}

// Spec is a stage shard's container, as data: everything the renderer needs
// and everything `miles-ci run --dry-run` shows.
type Spec struct {
	// Stage is the stage (= suite) name.
	Stage string `json:"stage"`
	// HW is the backend.
	HW policy.Backend `json:"hw"`
	// Shard is the shard, nil when the stage is not sharded.
	Shard *policy.Partition `json:"shard"`
	// Cadence is the run's cadence.
	Cadence policy.Cadence `json:"cadence"`
	// File is the test file of a single-file run, "" for a stage run.
	File string `json:"file,omitempty"`
	// Image is the image the container starts from.
	Image string `json:"image"`
	// Env is the static environment, set right after the image.
	Env []EnvVar `json:"env"`
	// RunEnv is the per-run environment, set in the run phase.
	RunEnv []EnvVar `json:"run_env"`
	// Caches are mounted right after the static environment.
	Caches []Cache `json:"caches"`
	// Secrets are the secret names the run step reads, as env variables.
	Secrets []string `json:"secrets"`
	// SecretsWithheld says why Secrets is empty when the stage has some (a fork PR).
	SecretsWithheld string `json:"secrets_withheld,omitempty"`
	// CachesWithheld says why no step has a cache volume mounted (a fork
	// PR: no code of it may write what later runs read); empty when every
	// step shares Caches.
	CachesWithheld string `json:"caches_withheld,omitempty"`
	// GPU is how the container sees GPUs.
	GPU GPU `json:"gpu"`
	// ShmBytes is the size of /dev/shm.
	ShmBytes int64 `json:"shm_bytes"`
	// Ulimits are raised by the run steps' wrapper.
	Ulimits []Ulimit `json:"ulimits"`
	// Data are the optional data folders.
	Data []DataMount `json:"data"`
	// Resolve are the ls-remote steps still to run; empty once every moving
	// ref is resolved to a commit.
	Resolve []ResolveStep `json:"resolve"`
	// Steps are the container's steps in order.
	Steps []Step `json:"steps"`
	// CacheRegistry, when set, is the repository the dependency layers
	// (the steps before the source phase) are shared through across hosts:
	// pulled by digest when published under their content key (LayerKey),
	// else built and published there.
	CacheRegistry string `json:"cache_registry,omitempty"`
	// CacheKey proves what is pulled from and published to CacheRegistry
	// (nil: nothing is pulled or published); a secret, in no output.
	CacheKey *CacheKey `json:"-"`
	// Tests are the files the run reports on (miles-ci's own plan).
	Tests []ExpectedTest `json:"tests"`
	// Skipped are the plan's disabled tests, with their reasons.
	Skipped []policy.SkippedTest `json:"skipped"`
	// CheckPlan is set when the in-container plan must list exactly Tests.
	CheckPlan bool `json:"check_plan"`
	// PlanFromContainer, when set, says why the container's own --list-only
	// is the plan (Tests is then filled from it when the run starts).
	PlanFromContainer string `json:"plan_from_container,omitempty"`
	// TimeoutS is how long the run may take before miles-ci's run wrapper
	// ends it as a TIMEOUT (the job's timeout, or a single file's).
	TimeoutS int `json:"timeout_s"`
	// ContinueOnError is set when the runner goes on after a failed file.
	ContinueOnError bool `json:"continue_on_error"`
	// MaxAttempts is how often the runner may run one file (2 with retry).
	MaxAttempts int `json:"max_attempts"`
}

// DeadlineGraceS is what miles-ci's deadline adds to a run's timeout: the
// run wrapper's 30 s from TERM to KILL, its 5 s of reading what is left,
// and the steps before the run.
const DeadlineGraceS = 90

// DeadlineS is the run's one deadline, in seconds, from the first step of
// its container to the end of its run step: the timeout plus
// DeadlineGraceS. The engine's client keeps it, outside the container, so
// no code in it (a sitecustomize, a sleeping plan or
// verify_source_resolution.py, a stopped wrapper) can stretch the run.
func (s Spec) DeadlineS() int { return s.TimeoutS + DeadlineGraceS }

// SourceExclude are the paths of a Miles checkout never copied into a stage
// container: git metadata and local build and cache folders.
var SourceExclude = []string{".git", "**/__pycache__", "**/.pytest_cache", "**/.venv", "**/*.egg-info"}
