package stagerun

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/metricgate"
	"github.com/radixark/miles-ci/policy"
)

// Fixed facts of the Miles CI jobs (rules §9).
const (
	// CPUImage is the image CPU stages run in: the GitHub-hosted runner's
	// Python 3.11, as a container (the CPU row's StageImage).
	CPUImage = policy.CPUImage
	// HelmVersion is the helm the CPU workflow sets up.
	HelmVersion = "v4.2.3"
	// SGLangURL and MegatronURL are the dependency repositories the CPU
	// workflow checks out (the GPU images' checkouts have them as origin).
	SGLangURL   = "https://github.com/sgl-project/sglang"
	MegatronURL = "https://github.com/radixark/Megatron-LM"
	// SGLangDir and MegatronDir are the dependency checkouts in the GPU images.
	SGLangDir   = "/sgl-workspace/sglang"
	MegatronDir = "/root/Megatron-LM"
	// ShmBytes is the GPU stages' --shm-size=32g.
	ShmBytes = policy.ShmBytes
	// TimeoutPerFile is run_suite.py's default per-file timeout, and
	// RetryTimeoutIncrease what --enable-retry adds to it.
	TimeoutPerFile       = policy.TimeoutPerFile
	RetryTimeoutIncrease = policy.RetryTimeoutIncrease
)

// Secret names the stages read (rules §9, §10; each backend's
// policy.BackendProfile lists its own).
const (
	SecretWandb = policy.SecretWandb
	SecretNeon  = policy.SecretNeon
	SecretHF    = policy.SecretHF
)

// containerSteps are the steps of each backend's container before the run
// phase (rules §9): the one part of a backend that is code, not a row of
// policy's backend profiles.
var containerSteps = map[policy.Backend]func(*builder){
	policy.CPU:  (*builder).cpu,
	policy.CUDA: (*builder).cuda,
	policy.ROCM: (*builder).rocm,
}

var fullCommit = lazyre.New(`^[0-9a-f]{40}$`)

// dependency is one of SGLang and Megatron-LM as the stage containers see it.
type dependency struct {
	name     string // sglang or megatron
	url      string // repository the CPU workflow checks out
	imageDir string // checkout baked into the GPU images
	cpuDir   string // where the CPU workflow checks it out, relative to the workspace
	branch   string // the default branch head
}

var (
	sglangDependency   = dependency{"sglang", SGLangURL, SGLangDir, "sglang", deps.DefaultSGLangBranch}
	megatronDependency = dependency{"megatron", MegatronURL, MegatronDir, "Megatron-LM", deps.DefaultMegatronBranch}
)

// Build turns a request into the stage container's spec (rules §9, §10).
// A moving dependency ref (a branch, tag or #N) with no commit in
// req.Commits is fetched by name in the spec and listed in Spec.Resolve; the
// front ends run Resolve first so the spec they render fetches commits.
func Build(req Request) (Spec, error) {
	st := req.Stage
	if st.Name == "" {
		return Spec{}, errors.New("no stage given; name one of the roster's stages (miles-ci stages)")
	}
	if st.External || len(st.RunsOn) == 0 {
		return Spec{}, fmt.Errorf("stage %s runs outside miles-ci (the external MI350 nightly); pick a stage of miles-ci stages", st.Name)
	}
	if err := checkRequest(req, policy.ProfileOf(st.Backend)); err != nil {
		return Spec{}, err
	}
	b := &builder{req: req, spec: Spec{
		Stage:   st.Name,
		HW:      st.Backend,
		Image:   req.Image.Image,
		Env:     []EnvVar{},
		RunEnv:  []EnvVar{},
		Caches:  []Cache{},
		Secrets: []string{},
		Ulimits: []Ulimit{},
		Data:    []DataMount{},
		Resolve: []ResolveStep{},
		Tests:   []ExpectedTest{},
		Skipped: []policy.SkippedTest{},
	}}
	if req.Plan != nil {
		b.spec.Shard, b.spec.Cadence, b.spec.CheckPlan = req.Plan.Partition, req.Plan.Cadence, req.PlanUnavailable == ""
		b.spec.PlanFromContainer = req.PlanUnavailable
		b.spec.Skipped = append(b.spec.Skipped, req.Plan.Skipped...)
	} else {
		b.spec.File = req.File.File
	}
	p, known := policy.Profile(st.Backend)
	steps := containerSteps[st.Backend]
	if !known || steps == nil {
		return Spec{}, fmt.Errorf("stage %s has unknown backend %q", st.Name, st.Backend)
	}
	b.profile = p
	if p.StageImage != "" {
		b.spec.Image = p.StageImage
	}
	if req.CacheRegistry != "" {
		if err := CheckCacheRegistry(req.CacheRegistry); err != nil {
			return Spec{}, err
		}
		b.spec.CacheRegistry, b.spec.CacheKey = req.CacheRegistry, req.CacheKey
	}
	steps(b)
	b.stamps()
	b.runPhase()
	return b.spec, nil
}

// stamps ends each phase before the run with a layer stamp: a step that
// writes a fresh random id to /opt/miles-ci/layers/PHASE (scripts/stamp.sh).
// A phase served from the cache keeps its old stamp, so comparing stamps
// across runs shows which phases really ran (see docs/running.md).
func (b *builder) stamps() {
	var out []Step
	next := 0 // index in Phases of the next phase to stamp
	stampUpTo := func(p Phase) {
		for next < len(Phases) && Phases[next] != p {
			out = append(out, Step{Name: "layer stamp", Phase: Phases[next], Kind: KindExec,
				Argv: script("stamp", string(Phases[next]))})
			next++
		}
	}
	for _, s := range b.spec.Steps {
		stampUpTo(s.Phase)
		out = append(out, s)
	}
	stampUpTo(PhaseRun)
	b.spec.Steps = out
}

// checkRequest checks that the parts of a request belong together; p is
// the stage's backend profile.
func checkRequest(req Request, p policy.BackendProfile) error {
	st := req.Stage
	switch {
	case (req.Plan == nil) == (req.File == nil):
		return errors.New("give either a plan (a stage run) or a file plan (a single-file run), not both or neither")
	case req.Plan != nil:
		p := req.Plan
		if p.HW != st.Backend || p.Suite != st.Name {
			return fmt.Errorf("the plan is for %s suite %s, not stage %s (%s)", p.HW, p.Suite, st.Name, st.Backend)
		}
		shards := st.ShardsFor(p.Cadence)
		if shards > 1 && (p.Partition == nil || p.Partition.Size != shards) {
			return fmt.Errorf("stage %s runs in %d shards; plan one shard of %d (got %v)", st.Name, shards, shards, partitionText(p.Partition))
		}
		if shards <= 1 && p.Partition != nil {
			return fmt.Errorf("stage %s is not sharded; plan it without a partition", st.Name)
		}
		if p.Partition != nil {
			if err := p.Partition.Validate(); err != nil {
				return fmt.Errorf("stage %s: %w", st.Name, err)
			}
		}
		for _, t := range p.Enabled {
			if strings.ContainsAny(t.File, "\r\n") {
				// run_suite.py --list-only prints one file a line: such a
				// name would fail the plan check as drift, after the build.
				return fmt.Errorf("test file %q has a line break in its name, which run_suite.py's plan (one file a line) cannot list; rename the file", t.File)
			}
		}
	case req.File != nil:
		if req.File.HW != st.Backend || req.File.Suite != st.Name {
			return fmt.Errorf("the file plan of %s runs on %s (%s), not stage %s", req.File.File, req.File.Suite, req.File.HW, st.Name)
		}
	}
	for _, l := range req.Labels {
		if l == "" || strings.HasPrefix(l, "-") {
			return fmt.Errorf("label %q would be read as an option of run_suite.py; give PR label names such as run-ci-megatron", l)
		}
	}
	if !req.Deps.Install && !p.BakedDeps {
		return fmt.Errorf("no dependency decision for %s stage %s; resolve it with deps.Resolve", st.Backend, st.Name)
	}
	if p.StageImage == "" && !strings.Contains(req.Image.Image, ":") {
		return fmt.Errorf("no image for %s stage %s; resolve it with deps.ResolveImage", st.Backend, st.Name)
	}
	if err := req.GitHub.Check(); err != nil {
		return fmt.Errorf("GitHub run facts: %w", err)
	}
	if p.GPU == NoGPU && (len(req.VisibleDevices) > 0 || len(req.GPUs.Devices) > 0) {
		return fmt.Errorf("stage %s is a CPU stage: --gpus ids and --visible-devices apply to GPU stages only", st.Name)
	}
	if p.GPU != NVIDIA && len(req.GPUs.Devices) > 0 {
		return fmt.Errorf("--gpus %s: device ids select NVIDIA GPUs only; for ROCm give --gpus all and --visible-devices (HIP_VISIBLE_DEVICES)", req.GPUs)
	}
	return nil
}

func partitionText(p *policy.Partition) string {
	if p == nil {
		return "no partition"
	}
	return fmt.Sprintf("%s (0-based id=%d)", p, p.ID)
}

// builder accumulates a spec.
type builder struct {
	req     Request
	profile policy.BackendProfile // the stage's backend
	spec    Spec
}

func (b *builder) env(name, value string) { b.spec.Env = append(b.spec.Env, EnvVar{name, value}) }

func (b *builder) cache(key, path string, sharing CacheSharing) {
	b.spec.Caches = append(b.spec.Caches, Cache{Key: key, Path: path, Sharing: sharing})
}

func (b *builder) step(s Step) {
	if s.Kind == "" {
		s.Kind = KindExec
	}
	b.spec.Steps = append(b.spec.Steps, s)
}

// githubEnv is what every GitHub Actions step sees.
func (b *builder) githubEnv() {
	b.env("CI", "true")
	b.env("GITHUB_ACTIONS", "true")
	b.env("GITHUB_WORKSPACE", Workspace)
}

// hfCache mounts the Hugging Face cache volume where the GPU jobs mount
// /data/miles_ci/hf_cache.
func (b *builder) hfCache(paths ...string) {
	for _, p := range paths {
		b.cache("miles-ci:hf", p, Shared)
	}
}

func (b *builder) cuda() {
	b.githubEnv()
	sglangRoot := SGLangDir + "/python"
	b.env("SGLANG_SOURCE_ROOT", sglangRoot)
	b.env("MEGATRON_SOURCE_ROOT", MegatronDir)
	b.env("PYTHONPATH", Workspace+":"+sglangRoot+":"+MegatronDir)
	b.env("MILES_TEST_ENABLE_INFINITE_RUN", "false")
	b.cache("miles-ci:pip", "/root/.cache/pip", Shared)
	b.hfCache("/root/.cache/huggingface", "/data/miles_ci/hf_cache")

	for _, e := range b.stageEnv() {
		b.env(e.Name, e.Value)
	}
	if rec := b.steps().Reconcile; rec != nil {
		// The checkout's own reconciler (rules §11.6), with the files it names.
		var files []SourceFile
		for _, a := range rec[1:] {
			if reconcileFile.MatchString(a) && !strings.Contains(a, "..") {
				files = append(files, SourceFile{Path: a, Dest: Workspace + "/" + a})
			}
		}
		b.step(Step{Name: "reconcile Miles dependencies (" + strings.Join(rec[1:], " ") + ")", Phase: PhaseRequirements, Workdir: Workspace,
			Files: files, Argv: slices.Clone(rec)})
	} else {
		b.step(Step{Name: "install requirements.txt (keeping the image's cudnn)", Phase: PhaseRequirements, Workdir: Workspace,
			Files: []SourceFile{{Path: "requirements.txt", Dest: Workspace + "/requirements.txt"}},
			Argv:  script("reconcile", Workspace+"/requirements.txt")})
	}
	b.imageSync(sglangDependency, b.req.Deps.SGLang, b.req.Commits.SGLang)
	b.imageSync(megatronDependency, b.req.Deps.Megatron, b.req.Commits.Megatron)
	b.source()
	b.verifySources()
}

// steps are the run workflows' steps the request carries, or those of
// rules §9 when it carries none.
func (b *builder) steps() policy.RunSteps {
	if b.req.Steps.ROCmPackages == nil {
		return policy.BuiltinTables().RunSteps
	}
	return b.req.Steps
}

// stageEnv are the variables the run workflow sets for this stage's runners.
func (b *builder) stageEnv() []policy.StepEnv {
	env, _ := b.req.Steps.StageEnvFor(b.req.Stage.RunsOn)
	return env
}

// reconcileFile is an argument of the reconciler that names a file of the
// checkout (copied into the requirements layer).
var reconcileFile = lazyre.New(`^[A-Za-z0-9_][A-Za-z0-9_./-]*\.(txt|py|toml|in)$`)

func (b *builder) rocm() {
	b.githubEnv()
	b.env("PYTHONPATH", Workspace)
	b.env("MILES_HARDWARE_PLATFORM", "rocm")
	b.cache("miles-ci:pip", "/root/.cache/pip", Shared)
	b.hfCache("/root/.cache/huggingface", "/data/miles_ci/hf_cache")
	d := b.req.Deps
	if d.Install {
		b.cache("miles-ci:apt-cache", "/var/cache/apt", Locked)
		b.cache("miles-ci:apt-lists", "/var/lib/apt/lists", Locked)
		b.step(Step{Name: "toolchain for dependency builds (rustup, protoc)", Phase: PhaseDeps, Argv: script("rocm-toolchain")})
	}
	if d.SGLang.Source != deps.FromBaked {
		b.imageSync(sglangDependency, d.SGLang, b.req.Commits.SGLang)
		b.step(Step{Name: "install sglang", Phase: PhaseDeps, Workdir: SGLangDir,
			Argv: []string{"pip", "install", "-e", "python", "--no-deps", "--break-system-packages"}})
	}
	if deps.NeedsROCmPatch(b.spec.HW, d) && !b.steps().ROCmPatch {
		// The checkout's ROCm workflow no longer patches Megatron-LM (rules §11.6).
		b.imageSync(megatronDependency, d.Megatron, b.req.Commits.Megatron)
		b.step(Step{Name: "install megatron", Phase: PhaseDeps, Workdir: MegatronDir,
			Argv: []string{"pip", "install", "-e", ".", "--no-deps", "--break-system-packages"}})
	} else if deps.NeedsROCmPatch(b.spec.HW, d) {
		b.imageSync(megatronDependency, d.Megatron, b.req.Commits.Megatron)
		patch := deps.NewPatchPlan(Workspace + "/" + deps.ROCmPatchPath)
		b.step(Step{Name: "ROCm patch for Megatron-LM (rules §8)", Phase: PhaseDeps, Kind: KindPatch, Workdir: MegatronDir,
			Files: []SourceFile{{Path: deps.ROCmPatchPath, Dest: patch.Patch}},
			Patch: &PatchStep{Ref: d.Megatron.Ref, Patch: patch.Patch, Check: patch.Check, ReverseCheck: patch.ReverseCheck, Apply: patch.Apply}})
		b.step(Step{Name: "install megatron", Phase: PhaseDeps, Workdir: MegatronDir,
			Argv: []string{"pip", "install", "-e", ".", "--no-deps", "--break-system-packages"}})
	}
	// The workflow installs these after Miles; they do not depend on it, so
	// they come before the source and stay cached when a test file changes.
	b.step(Step{Name: "install the packages the ROCm workflow adds", Phase: PhaseDeps,
		Argv: append(append([]string{"pip", "install"}, b.steps().ROCmPackages...), "--break-system-packages")})
	b.source()
	b.step(Step{Name: "install miles", Phase: PhaseSource, Workdir: Workspace,
		Argv: []string{"pip", "install", "-e", ".", "--no-deps", "--break-system-packages"}})
}

func (b *builder) cpu() {
	b.githubEnv()
	sglang, megatron := Workspace+"/"+sglangDependency.cpuDir, Workspace+"/"+megatronDependency.cpuDir
	b.env("SGLANG_SOURCE_ROOT", sglang+"/python")
	b.env("MEGATRON_SOURCE_ROOT", megatron)
	b.env("PYTHONPATH", Workspace+":"+sglang+"/python:"+megatron)
	b.env("UV_SYSTEM_PYTHON", "1")
	b.cache("miles-ci:pip", "/root/.cache/pip", Shared)
	b.cache("miles-ci:uv", "/root/.cache/uv", Shared)
	b.hfCache("/root/.cache/huggingface")

	b.step(Step{Name: "set up uv and helm " + HelmVersion, Phase: PhaseBase, Argv: script("cpu-tools", HelmVersion)})
	b.step(Step{Name: "install requirements", Phase: PhaseRequirements, Workdir: Workspace,
		Files: []SourceFile{
			{Path: "requirements.txt", Dest: Workspace + "/requirements.txt"},
			{Path: "tests/ci/requirements-ci-cpu.txt", Dest: Workspace + "/tests/ci/requirements-ci-cpu.txt"},
		},
		Argv: []string{"uv", "pip", "install", "-r", "requirements.txt", "-r", "tests/ci/requirements-ci-cpu.txt"}})
	b.cpuCheckout(sglangDependency, b.req.Deps.SGLang, b.req.Commits.SGLang)
	b.cpuCheckout(megatronDependency, b.req.Deps.Megatron, b.req.Commits.Megatron)
	b.source()
	b.verifySources()
}

// target is what a dependency checkout fetches: the resolved commit, else
// the ref itself, listing an ls-remote step when it is a moving ref.
func (b *builder) target(dep dependency, ref deps.Ref, commit, workdir, remote string) string {
	if commit != "" {
		return commit
	}
	if fullCommit.MatchString(ref.Fetch) {
		return ref.Fetch
	}
	b.spec.Resolve = append(b.spec.Resolve, ResolveStep{
		Dependency: dep.name, Ref: ref.Ref, Origin: ref.Origin(), Fetch: ref.Fetch, Workdir: workdir,
		Argv: []string{"git", "ls-remote", remote, ref.Fetch},
	})
	return ref.Fetch
}

// imageSync moves a GPU image's dependency checkout to the decided commit,
// with the workflows' own argv (deps.SyncSteps).
func (b *builder) imageSync(dep dependency, ref deps.Ref, commit string) {
	target := b.target(dep, ref, commit, dep.imageDir, "origin")
	steps := deps.SyncSteps(deps.Ref{Ref: ref.Ref, Fetch: target, Source: ref.Source})
	steps = append(steps, []string{"git", "log", "--oneline", "-1"})
	for _, argv := range steps {
		b.step(Step{Name: fmt.Sprintf("sync %s to %s (%s)", dep.name, ref.Ref, ref.Origin()), Phase: PhaseDeps,
			Workdir: dep.imageDir, Argv: argv})
	}
}

// cpuCheckout checks a dependency out into the workspace at the decided
// commit, as the CPU workflow's actions/checkout does (one commit deep).
func (b *builder) cpuCheckout(dep dependency, ref deps.Ref, commit string) {
	dir := Workspace + "/" + dep.cpuDir
	target := b.target(dep, ref, commit, "", dep.url)
	for _, argv := range [][]string{
		{"git", "init", "-q", dir},
		{"git", "-C", dir, "remote", "add", "origin", dep.url},
		{"git", "-C", dir, "fetch", "--depth=1", "origin", target},
		{"git", "-C", dir, "checkout", "-q", "-f", "FETCH_HEAD"},
		{"git", "-C", dir, "log", "--oneline", "-1"},
	} {
		b.step(Step{Name: fmt.Sprintf("check out %s at %s (%s)", dep.name, ref.Ref, ref.Origin()), Phase: PhaseDeps, Argv: argv})
	}
}

func (b *builder) source() {
	b.step(Step{Name: "copy the Miles checkout to the workspace", Phase: PhaseSource, Kind: KindSource, Workdir: Workspace})
}

func (b *builder) verifySources() {
	b.step(Step{Name: "verify source resolution", Phase: PhaseSource, Workdir: Workspace,
		Argv: []string{"python", "tests/ci/verify_source_resolution.py"}})
}

// runPhase adds the per-run parts: GPUs, env, data, shm, limits, secrets and
// the gpu-wait, plan and run steps.
func (b *builder) runPhase() {
	req, p := b.req, b.profile
	b.spec.GPU = GPU{Kind: NoGPU, Devices: device.Set{}}
	if p.GPU != NoGPU && !req.GPUs.None {
		// Device ids select NVIDIA GPUs only (checkRequest).
		b.spec.GPU = GPU{Kind: p.GPU, Devices: append(device.Set{}, req.GPUs.Devices...)}
	}
	b.spec.GPU.VisibleEnv = p.VisibleDevices
	b.spec.GPU.Visible = req.VisibleDevices.String()

	sha, pr := req.HeadSHA, req.PRNumber
	if sha == "" {
		sha = "local"
	}
	if pr == "" {
		pr = "non-pr"
	}
	b.spec.RunEnv = append(b.spec.RunEnv, EnvVar{"GITHUB_COMMIT_NAME", sha + "_" + pr},
		EnvVar{"GITHUB_STEP_SUMMARY", StepSummaryPath})
	if req.Plan != nil && p.Backend == policy.CUDA {
		// The harness gives each attempt a record folder under it and
		// merges the passing attempt's records (rules §16); Miles' CI sets
		// it only with its store, miles-ci always, to judge them itself.
		b.spec.RunEnv = append(b.spec.RunEnv, EnvVar{metricgate.RecordDirEnv, GateRecordDir})
	}
	if len(req.VisibleDevices) > 0 {
		b.spec.RunEnv = append(b.spec.RunEnv, EnvVar{b.spec.GPU.VisibleEnv, b.spec.GPU.Visible})
	}
	// The run's own facts come last and only here: a new run id or attempt
	// changes no layer before the run phase.
	b.spec.RunEnv = append(b.spec.RunEnv, req.GitHub.Env()...)
	b.spec.ShmBytes = p.ShmBytes
	b.spec.Ulimits = append(b.spec.Ulimits, p.Ulimits...)
	if p.DataMounts {
		if req.Models {
			b.spec.Data = append(b.spec.Data, DataMount{Models, []string{"/root/models", "/data/miles_ci/models"}})
		}
		if req.Datasets {
			b.spec.Data = append(b.spec.Data, DataMount{Datasets, []string{"/root/datasets", "/data/miles_ci/datasets"}})
		}
	}
	secrets := p.Secrets
	if req.File != nil {
		secrets = p.FileSecrets
	}
	if req.Fork {
		b.spec.SecretsWithheld = "a pull request from a fork gets no secrets: " + strings.Join(secrets, ", ")
		// A fork's code runs from the requirements step on (its
		// requirements.txt, reconciler, verify_source_resolution.py, pip
		// install -e, tests): no step of its container mounts a cache
		// volume, so nothing it writes reaches a trusted run.
		b.spec.Caches = []Cache{}
		b.spec.CachesWithheld = "a pull request from a fork mounts no cache volume in any step, so no code of it can write what a later run reads"
	} else {
		b.spec.Secrets = secrets
	}

	if b.spec.GPU.Kind != NoGPU {
		b.step(Step{Name: "wait for the GPUs", Phase: PhaseRun, Role: RoleGPUWait, Privileged: true,
			Argv: script("gpu-wait", string(b.spec.GPU.Kind))})
	}
	var command []string
	if req.Plan != nil {
		command = b.suiteCommand()
		b.step(Step{Name: "plan (run_suite.py --list-only)", Phase: PhaseRun, Role: RolePlan, Workdir: Workspace,
			Argv: script("plan", append(command, "--list-only")...)})
		for _, t := range req.Plan.Enabled {
			b.spec.Tests = append(b.spec.Tests, ExpectedTest{File: t.File, TimeoutS: fileTimeout(p, t.EstTime), EstTime: t.EstTime})
		}
		b.spec.ContinueOnError = req.Plan.ContinueOnError
		b.spec.MaxAttempts = p.MaxAttempts
		b.spec.TimeoutS = b.req.Steps.TimeoutMinutes(p.Backend, p.StageTimeoutMinutes) * 60
		if req.TimeoutMinutes > 0 {
			b.spec.TimeoutS = req.TimeoutMinutes * 60
		}
	} else {
		// /rerun-test wraps the file in `timeout --signal=TERM
		// --kill-after=30s`; miles-ci's run wrapper is that timer here, so
		// the file's own exit 124 or a SIGKILL is never taken for a timeout.
		f := req.File
		command = append([]string{}, f.Command...)
		b.spec.Tests = append(b.spec.Tests, ExpectedTest{File: f.File, TimeoutS: intPtr(f.TimeoutSeconds)})
		b.spec.TimeoutS, b.spec.MaxAttempts = f.TimeoutSeconds, 1
	}
	opts := []string{"--timeout", strconv.Itoa(b.spec.TimeoutS), "--kill-after", "30", "--reap"}
	for _, u := range b.spec.Ulimits {
		opts = append(opts, "--ulimit", u.Flag, u.Value)
	}
	if b.spec.GPU.Kind == AMD {
		opts = append(opts, "--rocm-devices")
	}
	run := Step{Name: "run the tests", Phase: PhaseRun, Role: RoleRun, Workdir: Workspace, Privileged: p.Privileged,
		Argv: wrapper(opts, command)}
	if p.Pytest {
		run.Env = []EnvVar{{"PYTEST_ADDOPTS", "--junitxml=" + JUnitPath}}
	}
	b.step(run)
}

// StageTimeoutMinutes is a stage run's timeout when neither --timeout-minutes
// nor the checkout's run workflow (timeout-minutes of its test job) gives
// one: Miles 31f1ca9's CPU job (_run-cpu-ci.yml: 60), and GitHub's default
// job timeout (360) for the GPU jobs, which set none (the backend profile's
// StageTimeoutMinutes).
func StageTimeoutMinutes(b policy.Backend) int {
	return policy.ProfileOf(b).StageTimeoutMinutes
}

// suiteCommand is the workflow's run_suite.py command line for the shard (rules §1).
func (b *builder) suiteCommand() []string {
	req, st, p := b.req, b.req.Stage, b.req.Plan
	argv := []string{"python", "tests/ci/run_suite.py", "--hw", string(st.Backend), "--suite", st.Name}
	if p.Partition != nil {
		argv = append(argv, "--auto-partition-id", strconv.Itoa(p.Partition.ID), "--auto-partition-size", strconv.Itoa(p.Partition.Size))
	}
	argv = append(argv, "--cadence", string(p.Cadence), "--labels")
	argv = append(argv, req.Labels...)
	if req.MatchAllLabels {
		argv = append(argv, "--match-all-labels")
	}
	return append(argv, b.profile.RetryArgs...)
}

// fileTimeout is run_suite.py's timeout of one file in a stage run,
// max(the backend's floor, est_time × 1.25) (rules §5); nil when the
// backend's runner has none per file.
func fileTimeout(p policy.BackendProfile, est float64) *int {
	if p.FileTimeoutS == 0 {
		return nil
	}
	return intPtr(max(p.FileTimeoutS, scaledTimeout(est)))
}

// maxTimeout caps a scaled estimate so a silly est_time cannot overflow.
const maxTimeout = 7 * 24 * 3600

// scaledTimeout is int(est_time × 1.25), as run_suite.py computes it.
func scaledTimeout(est float64) int {
	s := est * 1.25
	if math.IsNaN(s) || s < 0 {
		return 0
	}
	return int(min(s, maxTimeout))
}

func intPtr(n int) *int { return &n }
