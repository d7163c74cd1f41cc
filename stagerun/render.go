package stagerun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/internal/resultsdir"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
)

// Container is the part of a container API the renderer uses. The Dagger
// module and the miles-ci command each adapt their Dagger SDK to it (the
// module's bindings and dagger.io/dagger); tests use a recording fake. Every
// With method returns a new container and leaves the receiver unchanged.
type Container interface {
	// From starts from an image.
	From(image string) Container
	// FromCheckoutDockerfile starts from the image the Miles checkout's
	// Dockerfile (repo-relative) builds, the checkout its build context;
	// the engine's cache reuses it while its inputs are unchanged.
	FromCheckoutDockerfile(dockerfile string) Container
	// WithEnvVariable sets an environment variable.
	WithEnvVariable(name, value string) Container
	// WithoutEnvVariable removes one.
	WithoutEnvVariable(name string) Container
	// WithWorkdir sets the working directory of later commands.
	WithWorkdir(path string) Container
	// WithMountedCache mounts the cache volume named key.
	WithMountedCache(path, key string, sharing CacheSharing) Container
	// WithoutMount unmounts what is mounted at path (a cache volume).
	WithoutMount(path string) Container
	// WithMountedTemp mounts a tmpfs of sizeBytes.
	WithMountedTemp(path string, sizeBytes int64) Container
	// WithSourceFile copies one file of the Miles checkout (repo-relative rel) to path.
	WithSourceFile(path, rel string) Container
	// WithSourceDirectory copies the whole Miles checkout to path.
	WithSourceDirectory(path string) Container
	// WithDataDirectory mounts a data folder; without one given it does nothing.
	WithDataDirectory(path string, name DataName) Container
	// WithSecretVariable sets env variable name from the secret of that name;
	// without one given it does nothing.
	WithSecretVariable(name string) Container
	// WithGPUs gives the container NVIDIA GPUs: these devices, or all when empty.
	WithGPUs(devices []string) Container
	// WithExec runs a command.
	WithExec(argv []string, opts ExecOptions) Container
	// WithNewFile writes a file.
	WithNewFile(path, contents string) Container
	// Stdout evaluates the container and returns the last command's stdout.
	Stdout(ctx context.Context) (string, error)
	// Stderr evaluates the container and returns the last command's stderr.
	Stderr(ctx context.Context) (string, error)
	// ExitCode evaluates the container and returns the last command's exit status.
	ExitCode(ctx context.Context) (int, error)
	// Stat describes a path of the container without following a symlink
	// (FileMissing when there is none).
	Stat(ctx context.Context, path string) (FileInfo, error)
	// Entries lists the names in a folder of the container.
	Entries(ctx context.Context, path string) ([]string, error)
	// ReadFile returns a file's contents, or an error when it is larger than limit bytes.
	ReadFile(ctx context.Context, path string, limit int) (string, error)
	// ImageRef is the registry image a From just started from, by digest
	// (REPO@sha256:...); an error for one that is not there, or for a
	// container that did not start from a registry image.
	ImageRef(ctx context.Context) (string, error)
	// Publish pushes the container (its filesystem, not its mounts, and its
	// config) to ref and returns ref with the digest pushed.
	Publish(ctx context.Context, ref string) (string, error)
	// SourceFileDigest is the digest of the contents of one file of the
	// Miles checkout (repo-relative rel).
	SourceFileDigest(ctx context.Context, rel string) (string, error)
}

// FileType is what a path of a container is.
type FileType string

// The file types Stat tells apart.
const (
	FileMissing   FileType = "missing"
	FileRegular   FileType = "regular"
	FileDirectory FileType = "directory"
	FileSymlink   FileType = "symlink"
	// FileOther is a device, FIFO or socket.
	FileOther FileType = "other"
)

// article names a file type with its article, e.g. "a symlink", "a device,
// FIFO or socket".
func (t FileType) article() string {
	switch t {
	case FileOther:
		return "a device, FIFO or socket"
	case FileMissing:
		return "missing"
	}
	return "a " + string(t)
}

// FileInfo is a path's type and size.
type FileInfo struct {
	Type FileType
	Size int
}

// ExecOptions are the options of one command.
type ExecOptions struct {
	// Privileged runs it with all root capabilities (docker --privileged).
	Privileged bool
	// AnyExitCode makes a non-zero exit status a result, not an error.
	AnyExitCode bool
}

// ResolveNonceEnv carries the nonce of the ref-resolution commands, so they
// run again on every call instead of answering from the cache.
const ResolveNonceEnv = "MILES_CI_RESOLVE_NONCE"

// Resolve runs the spec's ls-remote steps (uncached: the nonce differs per
// call) and returns the request with every moving ref's commit filled in,
// so the cached chain is keyed by commits: a moved branch is a new key.
func Resolve(ctx context.Context, c Container, req Request, nonce string) (Request, error) {
	spec, err := Build(req)
	if err != nil {
		return Request{}, err
	}
	commits, err := runResolve(ctx, c, spec.Image, spec.Resolve, nonce)
	if err != nil {
		return Request{}, err
	}
	if commits.SGLang != "" {
		req.Commits.SGLang = commits.SGLang
	}
	if commits.Megatron != "" {
		req.Commits.Megatron = commits.Megatron
	}
	return req, nil
}

// ResolveBranches finds the head commits of an SGLang and a Megatron-LM
// branch on their GitHub repositories, as the release branch cut freezes
// them into release-lock.json (uncached: the nonce differs per call).
func ResolveBranches(ctx context.Context, c Container, sglang, megatron, nonce string) (Commits, error) {
	var steps []ResolveStep
	for _, b := range []struct {
		dep    dependency
		branch string
	}{{sglangDependency, sglang}, {megatronDependency, megatron}} {
		if err := deps.CheckPin(b.branch); err != nil || strings.HasPrefix(b.branch, "#") {
			return Commits{}, fmt.Errorf("%s branch %q is not a branch name; give one such as %s", b.dep.name, b.branch, b.dep.branch)
		}
		head := "refs/heads/" + b.branch
		steps = append(steps, ResolveStep{Dependency: b.dep.name, Ref: b.branch, Origin: "release-lock", Fetch: head,
			Argv: []string{"git", "ls-remote", b.dep.url, head}})
	}
	return runResolve(ctx, c, CPUImage, steps, nonce)
}

// runResolve runs ls-remote steps in a fresh container of image.
func runResolve(ctx context.Context, c Container, image string, steps []ResolveStep, nonce string) (Commits, error) {
	var commits Commits
	for _, r := range steps {
		workdir := r.Workdir
		if workdir == "" {
			workdir = "/"
		}
		out, err := c.From(image).WithEnvVariable(ResolveNonceEnv, nonce).WithWorkdir(workdir).
			WithExec(r.Argv, ExecOptions{}).Stdout(ctx)
		if err != nil {
			return Commits{}, fmt.Errorf("resolving %s ref %s (%s) with %s: %w", r.Dependency, r.Ref, r.Origin, strings.Join(r.Argv, " "), err)
		}
		commit, ok, err := ParseLsRemote(out, r.Fetch)
		if err != nil {
			return Commits{}, fmt.Errorf("resolving %s ref %s (%s): %w", r.Dependency, r.Ref, r.Origin, err)
		}
		if !ok {
			return Commits{}, fmt.Errorf("%s ref %s (%s) does not exist: `%s` found no branch, tag or pull request named %s; name an existing one, a PR number (#N) or a full 40-character commit",
				r.Dependency, r.Ref, r.Origin, strings.Join(r.Argv, " "), r.Fetch)
		}
		switch r.Dependency {
		case sglangDependency.name:
			commits.SGLang = commit
		case megatronDependency.name:
			commits.Megatron = commit
		}
	}
	return commits, nil
}

// Prepared is a rendered container, ready for its run steps.
type Prepared struct {
	// Container has the dependencies installed, the source in place and the
	// per-run env, GPUs, mounts and secrets set; its workdir is the workspace.
	Container Container
	// Notes say what a decision found, e.g. the ROCm patch state.
	Notes []string
	// Layers say whether the dependency layers were pulled from the cache
	// registry or built here (zero without one).
	Layers Layers
}

// Render turns a resolved spec into a container: the image, static env and
// caches, then every step up to the run phase in order (deciding the ROCm
// patch on the way), then the per-run GPUs, env, data, /dev/shm and secrets.
// It runs nothing itself except the patch checks and, with a cache registry
// (Spec.CacheRegistry), what looks up, pulls or publishes the dependency
// layers (renderDeps).
func Render(ctx context.Context, c Container, spec Spec) (Prepared, error) {
	if len(spec.Resolve) > 0 {
		var refs []string
		for _, r := range spec.Resolve {
			refs = append(refs, r.Dependency+" "+r.Ref)
		}
		return Prepared{}, fmt.Errorf("unresolved dependency refs (%s): run stagerun.Resolve before rendering", strings.Join(refs, ", "))
	}
	c, notes, layers, err := renderDeps(ctx, c, spec)
	if err != nil {
		return Prepared{}, err
	}
	for _, s := range spec.Steps[len(depSteps(spec)):] {
		if s.Phase == PhaseRun {
			continue
		}
		var err error
		var note string
		if c, note, err = applyStep(ctx, c, s); err != nil {
			return Prepared{}, err
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	if spec.GPU.Kind == NVIDIA {
		c = c.WithGPUs(spec.GPU.Devices.Strings())
	}
	for _, e := range spec.RunEnv {
		c = c.WithEnvVariable(e.Name, e.Value)
	}
	for _, d := range spec.Data {
		for _, p := range d.Paths {
			c = c.WithDataDirectory(p, d.Name)
		}
	}
	if spec.ShmBytes > 0 {
		c = c.WithMountedTemp("/dev/shm", spec.ShmBytes)
	}
	for _, name := range spec.Secrets {
		c = c.WithSecretVariable(name)
	}
	return Prepared{Container: c.WithWorkdir(Workspace), Notes: notes, Layers: layers}, nil
}

// applyStep adds one step to the chain.
func applyStep(ctx context.Context, c Container, s Step) (Container, string, error) {
	for _, f := range s.Files {
		c = c.WithSourceFile(f.Dest, f.Path)
	}
	workdir := s.Workdir
	if workdir == "" {
		workdir = "/"
	}
	switch s.Kind {
	case KindSource:
		return c.WithSourceDirectory(Workspace), "", nil
	case KindPatch:
		return applyPatch(ctx, c.WithWorkdir(workdir), s)
	}
	c = c.WithWorkdir(workdir)
	for _, e := range s.Env {
		c = c.WithEnvVariable(e.Name, e.Value)
	}
	// The run step's exit status is a result (the engine keeps it), not an error.
	c = c.WithExec(s.Argv, ExecOptions{Privileged: s.Privileged, AnyExitCode: s.Role == RoleRun})
	for _, e := range s.Env {
		c = c.WithoutEnvVariable(e.Name)
	}
	return c, "", nil
}

// applyPatch decides the ROCm patch (rules §8) with deps.PatchPlan in the
// container: the checks run read-only, and only `git apply` joins the chain.
func applyPatch(ctx context.Context, c Container, s Step) (Container, string, error) {
	p := s.Patch
	plan := deps.PatchPlan{Patch: p.Patch, Check: p.Check, ReverseCheck: p.ReverseCheck, Apply: p.Apply}
	run := func(ctx context.Context, _ string, argv []string) (deps.StepResult, error) {
		r := c.WithExec(argv, ExecOptions{AnyExitCode: true})
		code, err := r.ExitCode(ctx)
		if err != nil {
			return deps.StepResult{}, err
		}
		stdout, err := r.Stdout(ctx)
		if err != nil {
			return deps.StepResult{}, err
		}
		stderr, err := r.Stderr(ctx)
		if err != nil {
			return deps.StepResult{}, err
		}
		return deps.StepResult{ExitCode: code, Output: stdout + stderr}, nil
	}
	out, err := plan.Run(ctx, run, s.Workdir, p.Ref, deps.PatchCheckOnly)
	if err != nil {
		return nil, "", err
	}
	if out.State == deps.PatchApply {
		return c.WithExec(plan.Apply, ExecOptions{}), fmt.Sprintf("ROCm patch: applied to Megatron-LM %s", p.Ref), nil
	}
	return c, fmt.Sprintf("ROCm patch: already present in Megatron-LM %s", p.Ref), nil
}

// Result is a finished run.
type Result struct {
	// Summary is what summary.json holds.
	Summary report.Summary
	// Files are the results folder, miles-ci's own: each a regular file of
	// a fixed name (or artifacts/NAME), bounded and masked, built from what
	// the engine captured and the runner's files read after the run.
	Files []ResultFile
	// Layers say where the dependency layers came from (Prepared.Layers).
	Layers Layers
	// GateRecords are the metric gate's records the run wrapper kept, as
	// the tests wrote them (unmasked: usecase.WithGate judges and masks
	// them).
	GateRecords []report.GateRecord
}

// ResultFile is one file of the results folder.
type ResultFile struct {
	// Name is its path in the folder, e.g. run.log or artifacts/x.txt.
	Name string
	// Data is its contents.
	Data string
}

// The names of the results folder.
const (
	SummaryFile     = "summary.json"
	JUnitFile       = "junit.xml"
	RunLogFile      = "run.log"
	PlanFile        = "plan.txt"
	StatusLogFile   = "status.log"
	ExitCodeFile    = "exit-code"
	ElapsedFile     = "elapsed"
	StepSummaryFile = "step-summary.md"
	// ArtifactsDir holds the other regular files the run left in ResultsDir.
	ArtifactsDir = "artifacts"
)

// Caps on what a run's outputs may hold. Over a cap, an output is cut with
// a note (run.log, plan.txt) or not read, with a note in its place; it is
// never a reason to drop the results.
const (
	// MaxLogBytes caps run.log; the run wrapper cuts the middle at it.
	MaxLogBytes = 8 << 20
	// maxPlanBytes caps plan.txt.
	maxPlanBytes = 1 << 20
	// maxJUnitBytes caps the pytest report read (a shard's is well under a MiB).
	maxJUnitBytes = 16 << 20
	// maxStepSummaryBytes is GitHub's own limit on a step summary.
	maxStepSummaryBytes = 1 << 20
	// maxArtifactBytes, maxArtifacts and maxArtifactsTotal bound artifacts/.
	maxArtifactBytes  = 1 << 20
	maxArtifacts      = 32
	maxArtifactsTotal = 8 << 20
	// maxLeftOutNames is how many of the files left out of artifacts/ the
	// notes name (the rest are counted).
	maxLeftOutNames = 20
)

// ErrCannotRun marks an error of a run that could not happen or be read
// (not a test failure): `miles-ci run` exits report.ExitCannotRun for it.
var ErrCannotRun = errors.New("miles-ci could not run or read the suite")

// cannot wraps err as ErrCannotRun.
func cannot(err error) error { return fmt.Errorf("%w: %w", ErrCannotRun, err) }

// Test runs a prepared container's run-phase steps: the run nonce, the GPU
// wait, the plan (checked against miles-ci's plan: a difference fails before
// any test runs) and the run. The verdict comes from the engine: the run
// wrapper's exit status as it recorded it and the wrapper's record (its last
// line of stderr), never a file in the container. A failing test is a
// result, not an error; an error (ErrCannotRun) means the run could not
// happen or its record cannot be read. Every exported byte is masked with m.
func Test(ctx context.Context, p Prepared, spec Spec, nonce string, m *report.Masker) (Result, error) {
	// One deadline for everything the checkout's code runs in (the lazy
	// chain's steps are evaluated by the plan's and the run's calls below),
	// kept by the engine's client, outside the container: no code in it can
	// stretch the run past it.
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(spec.TimeoutS)*time.Second+deadlineGrace)
	defer cancel()
	overdue := func() bool { return ctx.Err() == nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) }
	c := p.Container.WithEnvVariable(RunIDEnv, nonce)
	var planText string
	for _, s := range spec.Steps {
		if s.Phase != PhaseRun {
			continue
		}
		if s.Role == RoleRun && spec.File == "" {
			// The wrapper keeps the status lines where the runner prints
			// them ([i/n] FILE_i of this plan), so no flood of test output
			// shaped like them can push the runner's out.
			c = c.WithEnvVariable(PlanEnv, planJSON(spec.Tests))
		}
		if s.Role == RoleRun && policy.ProfileOf(spec.HW).Pytest {
			// The wrapper loads miles-ci's pytest plugin, which reports
			// each outcome through a channel outside /results.
			c = c.WithEnvVariable(PytestEnv, "1")
		}
		var err error
		if c, _, err = applyStep(ctx, c, s); err != nil {
			return Result{}, cannot(err)
		}
		if s.Role == RolePlan {
			if planText, err = c.Stdout(runCtx); err != nil {
				if overdue() {
					return overdueResult(p, spec, m), nil
				}
				return Result{}, cannot(fmt.Errorf("running the steps up to the in-container plan (run_suite.py --list-only): %w", err))
			}
			if len(planText) > maxPlanBytes {
				return Result{}, cannot(fmt.Errorf("the in-container plan (run_suite.py --list-only) printed more than the %d bytes miles-ci reads of it (a plan is a few KiB); is the checkout's tests/ci/run_suite.py printing something else?", maxPlanBytes))
			}
			if spec.CheckPlan {
				if err := checkPlan(planText, spec); err != nil {
					return Result{}, cannot(err)
				}
			}
		}
		if s.Role == RolePlan && spec.PlanFromContainer != "" {
			if spec, err = withContainerPlan(planText, spec); err != nil {
				return Result{}, cannot(err)
			}
		}
	}
	code, err := c.ExitCode(runCtx)
	if err != nil {
		if overdue() {
			return overdueResult(p, spec, m), nil
		}
		return Result{}, cannot(fmt.Errorf("the run step did not finish (was miles-ci's run wrapper killed?): %w", err))
	}
	stdout, err := c.Stdout(ctx)
	if err != nil {
		return Result{}, cannot(fmt.Errorf("reading the run's output: %w", err))
	}
	stderr, err := c.Stderr(ctx)
	if err != nil {
		return Result{}, cannot(fmt.Errorf("reading the run wrapper's record: %w", err))
	}
	rec, err := report.ParseRecord(stderr)
	if err != nil {
		return Result{}, cannot(err)
	}
	if err := rec.CheckEngine(code); err != nil {
		return Result{}, cannot(err)
	}
	log := m.Mask(report.Cap(stdout, MaxLogBytes+4096))
	in := report.Input{HW: spec.HW, Suite: spec.Stage, Shard: spec.Shard, Cadence: spec.Cadence, Image: spec.Image,
		File: spec.File, Skipped: spec.Skipped, ContinueOnError: spec.ContinueOnError, MaxAttempts: spec.MaxAttempts,
		Run: rec, Log: log}
	for _, t := range spec.Tests {
		in.Tests = append(in.Tests, report.Expected{File: t.File, TimeoutS: t.TimeoutS})
	}
	var pytestJUnit string
	if policy.ProfileOf(spec.HW).Pytest {
		data, problem, err := readRunnerFile(ctx, c, JUnitPath, maxJUnitBytes, "pytest's junit.xml")
		if err != nil {
			return Result{}, cannot(err)
		}
		if problem == "" && data != "" {
			cases, err := report.ParseJUnit([]byte(data))
			if err != nil {
				problem = fmt.Sprintf("pytest's junit.xml is malformed (%v)", err)
			} else {
				in.JUnit, in.HaveJUnit, pytestJUnit = cases, true, data
			}
		}
		in.JUnitProblem = problem
	}
	summary := report.Summarize(in)
	for i := range summary.Tests {
		summary.Tests[i].EstTime = spec.Tests[i].EstTime // for the runtime history (issue 25)
	}
	summary.Notes = append(append([]string{}, p.Notes...), summary.Notes...)
	files, fileNotes, err := runnerFiles(ctx, c, m)
	if err != nil {
		return Result{}, cannot(err)
	}
	summary.Notes = append(summary.Notes, fileNotes...)
	js, err := encode.JSON(summary)
	if err != nil {
		return Result{}, cannot(fmt.Errorf("encoding summary.json: %w", err))
	}
	junit := string(report.JUnit(summary))
	if pytestJUnit != "" {
		junit = pytestJUnit
	}
	out := []ResultFile{
		{SummaryFile, m.Mask(string(js))},
		{JUnitFile, m.Mask(junit)},
		{RunLogFile, log},
		{PlanFile, m.Mask(report.Cap(planText, maxPlanBytes))},
		{StatusLogFile, m.Mask(strings.Join(append(rec.StatusLines, ""), "\n"))},
		{ExitCodeFile, fmt.Sprintf("%d\n", summary.ExitCode)},
		{ElapsedFile, fmt.Sprintf("%.0f\n", rec.ElapsedS)},
	}
	return Result{Summary: summary, Files: append(out, files...), Layers: p.Layers, GateRecords: rec.GateRecords}, nil
}

// PlanEnv carries the planned files, in order, to the run wrapper (a JSON
// list; the wrapper takes it out of the runner's environment).
const PlanEnv = "MILES_CI_PLAN"

// PytestEnv asks the run wrapper for miles-ci's pytest plugin and channel.
const PytestEnv = "MILES_CI_PYTEST"

// planJSON is the planned files as a JSON list.
func planJSON(tests []ExpectedTest) string {
	files := make([]string, len(tests))
	for i, t := range tests {
		files[i] = t.File
	}
	data, _ := json.Marshal(files)
	return string(data)
}

// deadlineGrace is DeadlineGraceS (a variable for the tests).
var deadlineGrace = DeadlineGraceS * time.Second

// overdueResult is the result of a run that miles-ci's deadline ended from
// outside the container (Spec.DeadlineS): nothing of the container is read,
// the verdict is timeout (exit 124), the file that was due next timed out
// and the rest did not run.
func overdueResult(p Prepared, spec Spec, m *report.Masker) Result {
	rec := report.RunRecord{Ending: report.TimedOut, TimeoutS: spec.TimeoutS, ElapsedS: float64(spec.DeadlineS()), StatusLines: []string{}}
	in := report.Input{HW: spec.HW, Suite: spec.Stage, Shard: spec.Shard, Cadence: spec.Cadence, Image: spec.Image,
		File: spec.File, Skipped: spec.Skipped, ContinueOnError: spec.ContinueOnError, MaxAttempts: spec.MaxAttempts, Run: rec,
		HaveJUnit: true}
	for _, t := range spec.Tests {
		in.Tests = append(in.Tests, report.Expected{File: t.File, TimeoutS: t.TimeoutS})
	}
	summary := report.Summarize(in)
	why := fmt.Sprintf("miles-ci's deadline (the run's timeout %ds plus %ds, kept outside the container) ended the run; nothing the container printed or wrote was read", spec.TimeoutS, DeadlineGraceS)
	summary.Notes = append(append(append([]string{}, p.Notes...), why), summary.Notes...)
	js, err := encode.JSON(summary)
	if err != nil {
		js = []byte("{}")
	}
	return Result{Summary: summary, Layers: p.Layers, Files: []ResultFile{
		{SummaryFile, m.Mask(string(js))},
		{JUnitFile, m.Mask(string(report.JUnit(summary)))},
		{RunLogFile, "[miles-ci: " + why + "]\n"},
		{PlanFile, ""},
		{StatusLogFile, ""},
		{ExitCodeFile, fmt.Sprintf("%d\n", summary.ExitCode)},
		{ElapsedFile, fmt.Sprintf("%d\n", spec.DeadlineS())},
	}}
}

// checkPlan compares the container's plan with miles-ci's.
func checkPlan(text string, spec Spec) error {
	files, err := report.ParseListOnly(text)
	if err != nil {
		return err
	}
	want := make([]string, len(spec.Tests))
	for i, t := range spec.Tests {
		want[i] = t.File
	}
	return report.CheckPlan(files, want)
}

// readRunnerFile reads a file the runner writes in ResultsDir, which the
// tests can reach too: only a regular file (never a symlink, device or
// FIFO) of at most limit bytes is read. problem says why it was not ("" and
// no data when there is none).
func readRunnerFile(ctx context.Context, c Container, path string, limit int, what string) (data, problem string, err error) {
	info, err := c.Stat(ctx, path)
	if err != nil {
		return "", "", fmt.Errorf("looking at %s: %w", what, err)
	}
	switch {
	case info.Type == FileMissing:
		return "", "", nil
	case info.Type != FileRegular:
		return "", fmt.Sprintf("%s is %s, not a regular file; not read", what, info.Type.article()), nil
	case info.Size > limit:
		return "", fmt.Sprintf("%s is %d bytes, more than the %d miles-ci reads; not read", what, info.Size, limit), nil
	}
	data, err = c.ReadFile(ctx, path, limit)
	if err != nil {
		return "", "", fmt.Errorf("reading %s: %w", what, err)
	}
	return data, "", nil
}

// artifactName is a name artifacts/ takes: one plain path element.
var artifactName = lazyre.New(`^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$`)

// reserved are the names of ResultsDir that are not artifacts: the runner's
// own files, read as such, and the names of miles-ci's results.
var reserved = map[string]bool{resultsdir.Marker: true, "junit.xml": true, "step-summary.md": true, "summary.json": true, "run.log": true,
	"plan.txt": true, "status.log": true, "exit-code": true, "elapsed": true}

// runnerFiles are the files of the results folder that come from the
// runner's ResultsDir: the step summary, and as artifacts/ the other regular
// files (top level only, bounded in number and size), each masked. What is
// left out is named in the notes.
func runnerFiles(ctx context.Context, c Container, m *report.Masker) ([]ResultFile, []string, error) {
	var out []ResultFile
	var notes []string
	info, err := c.Stat(ctx, ResultsDir)
	if err != nil {
		return nil, nil, fmt.Errorf("looking at %s: %w", ResultsDir, err)
	}
	if info.Type != FileDirectory {
		return nil, []string{fmt.Sprintf("%s is %s after the run, not a folder; nothing of it is exported", ResultsDir, info.Type.article())}, nil
	}
	data, problem, err := readRunnerFile(ctx, c, StepSummaryPath, maxStepSummaryBytes, "the step summary ($GITHUB_STEP_SUMMARY)")
	if err != nil {
		return nil, nil, err
	}
	if problem != "" {
		notes = append(notes, problem)
	} else if data != "" {
		out = append(out, ResultFile{StepSummaryFile, m.Mask(data)})
	}
	names, err := c.Entries(ctx, ResultsDir)
	if err != nil {
		return nil, nil, fmt.Errorf("listing %s: %w", ResultsDir, err)
	}
	sort.Strings(names)
	total, count, skipped, left := 0, 0, []string{}, 0
	leaveOut := func(name string) {
		// A count and the first few: 100,000 files must not make a
		// summary.json (or a step summary) of megabytes.
		left++
		if len(skipped) < maxLeftOutNames {
			skipped = append(skipped, fmt.Sprintf("%q", m.Mask(name)))
		}
	}
	for _, name := range names {
		name = strings.TrimSuffix(name, "/")
		if reserved[name] {
			continue
		}
		// A name holding a secret value is not exported, nor even looked
		// at: the engine's progress would show the path.
		if !artifactName.MatchString(name) || count >= maxArtifacts || m.Mask(name) != name {
			leaveOut(name)
			continue
		}
		data, problem, err := readRunnerFile(ctx, c, ResultsDir+"/"+name, maxArtifactBytes, name)
		if err != nil {
			return nil, nil, err
		}
		if problem != "" || total+len(data) > maxArtifactsTotal {
			leaveOut(name)
			continue
		}
		total, count = total+len(data), count+1
		out = append(out, ResultFile{ArtifactsDir + "/" + name, m.Mask(data)})
	}
	if left > 0 {
		list := strings.Join(skipped, ", ")
		if left > len(skipped) {
			list += fmt.Sprintf(" and %d more", left-len(skipped))
		}
		notes = append(notes, fmt.Sprintf("not exported from %s, %d file(s) (not a regular file, over %d bytes, an odd name or one holding a secret, or over %d files or %d bytes in all): %s",
			ResultsDir, left, maxArtifactBytes, maxArtifacts, maxArtifactsTotal, list))
	}
	return out, notes, nil
}

// Prepare resolves a request's moving refs (with the nonce), builds its spec
// and renders it: the container `miles-ci run` and the module's container
// function hand back, before any run step.
func Prepare(ctx context.Context, c Container, req Request, nonce string) (Prepared, Spec, error) {
	req, err := Resolve(ctx, c, req, nonce)
	if err != nil {
		return Prepared{}, Spec{}, err
	}
	spec, err := Build(req)
	if err != nil {
		return Prepared{}, Spec{}, err
	}
	p, err := Render(ctx, c, spec)
	if err != nil {
		return Prepared{}, Spec{}, err
	}
	p.Notes = append(append([]string{}, req.Notes...), p.Notes...)
	return p, spec, nil
}
