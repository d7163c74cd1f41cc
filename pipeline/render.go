package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/internal/encode"
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
	// WithEnvVariable sets an environment variable.
	WithEnvVariable(name, value string) Container
	// WithoutEnvVariable removes one.
	WithoutEnvVariable(name string) Container
	// WithWorkdir sets the working directory of later commands.
	WithWorkdir(path string) Container
	// WithMountedCache mounts the cache volume named key.
	WithMountedCache(path, key string, sharing CacheSharing) Container
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
	// Exists reports whether a path exists in the container.
	Exists(ctx context.Context, path string) (bool, error)
	// ReadFile returns a file's contents, or an error when it is larger than limit bytes.
	ReadFile(ctx context.Context, path string, limit int) (string, error)
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
}

// Render turns a resolved spec into a container: the image, static env and
// caches, then every step up to the run phase in order (deciding the ROCm
// patch on the way), then the per-run GPUs, env, data, /dev/shm and secrets.
// It runs nothing itself except the patch checks.
func Render(ctx context.Context, c Container, spec Spec) (Prepared, error) {
	if len(spec.Resolve) > 0 {
		var refs []string
		for _, r := range spec.Resolve {
			refs = append(refs, r.Dependency+" "+r.Ref)
		}
		return Prepared{}, fmt.Errorf("unresolved dependency refs (%s): run pipeline.Resolve before rendering", strings.Join(refs, ", "))
	}
	c = c.From(spec.Image)
	for _, e := range spec.Env {
		c = c.WithEnvVariable(e.Name, e.Value)
	}
	for _, m := range spec.Caches {
		c = c.WithMountedCache(m.Path, m.Key, m.Sharing)
	}
	var notes []string
	for _, s := range spec.Steps {
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
		c = c.WithGPUs(spec.GPU.Devices)
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
	return Prepared{Container: c.WithWorkdir(Workspace), Notes: notes}, nil
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
	c = c.WithExec(s.Argv, ExecOptions{Privileged: s.Privileged})
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
	out, err := plan.Run(ctx, run, s.Workdir, p.Ref, false)
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
	// Container holds ResultsDir with summary.json and junit.xml written.
	Container Container
	// Summary is what summary.json holds.
	Summary report.Summary
}

// Limits on what a run's result files may hold before they are read.
const (
	maxSmallFile  = 64 << 10
	maxStatusFile = 4 << 20
	maxPlanFile   = 4 << 20
	maxJUnitFile  = 64 << 20
)

// Test runs a prepared container's run-phase steps: the run nonce, the GPU
// wait, the plan (checked against miles-ci's plan: a difference fails before
// any test runs) and the run. A failing test is a result, not an error; an
// error means the run could not happen or its results cannot be read.
func Test(ctx context.Context, p Prepared, spec Spec, nonce string) (Result, error) {
	c := p.Container.WithEnvVariable(RunIDEnv, nonce)
	for _, s := range spec.Steps {
		if s.Phase != PhaseRun {
			continue
		}
		var err error
		if c, _, err = applyStep(ctx, c, s); err != nil {
			return Result{}, err
		}
		if s.Role == RolePlan && spec.CheckPlan {
			if err := checkPlan(ctx, c, spec); err != nil {
				return Result{}, err
			}
		}
		if s.Role == RolePlan && spec.PlanFromContainer != "" {
			if spec, err = withContainerPlan(ctx, c, spec); err != nil {
				return Result{}, err
			}
		}
	}
	in, err := readResults(ctx, c, spec)
	if err != nil {
		return Result{}, err
	}
	summary := report.Summarize(in)
	summary.Notes = append(append([]string{}, p.Notes...), summary.Notes...)
	js, err := encode.JSON(summary)
	if err != nil {
		return Result{}, fmt.Errorf("encoding summary.json: %w", err)
	}
	c = c.WithNewFile(SummaryPath, string(js))
	if spec.HW != policy.CPU || !in.HaveJUnit {
		c = c.WithNewFile(JUnitPath, string(report.JUnit(summary)))
	}
	return Result{Container: c, Summary: summary}, nil
}

// checkPlan compares the container's plan with miles-ci's.
func checkPlan(ctx context.Context, c Container, spec Spec) error {
	text, err := c.ReadFile(ctx, PlanPath, maxPlanFile)
	if err != nil {
		return fmt.Errorf("running the steps up to the in-container plan (run_suite.py --list-only): %w", err)
	}
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

// readResults reads what the run step left in ResultsDir.
func readResults(ctx context.Context, c Container, spec Spec) (report.Input, error) {
	in := report.Input{HW: spec.HW, Suite: spec.Stage, Shard: spec.Shard, Cadence: spec.Cadence, Image: spec.Image,
		File: spec.File, Skipped: spec.Skipped}
	for _, t := range spec.Tests {
		in.Tests = append(in.Tests, report.Expected{File: t.File, TimeoutS: t.TimeoutS})
	}
	code, err := c.ReadFile(ctx, ExitCodePath, maxSmallFile)
	if err != nil {
		return in, fmt.Errorf("reading the run's exit code: %w", err)
	}
	if in.ExitCode, err = strconv.Atoi(strings.TrimSpace(code)); err != nil {
		return in, fmt.Errorf("the run's exit-code file holds %q, not a number", code)
	}
	if elapsed, err := c.ReadFile(ctx, ElapsedPath, maxSmallFile); err == nil {
		in.ElapsedS, _ = strconv.ParseFloat(strings.TrimSpace(elapsed), 64)
	}
	status, err := c.ReadFile(ctx, StatusLogPath, maxStatusFile)
	if err != nil {
		return in, fmt.Errorf("reading the run's status lines: %w", err)
	}
	if in.Status, err = report.ParseStatusLines(status); err != nil {
		return in, err
	}
	if spec.HW == policy.CPU {
		ok, err := c.Exists(ctx, JUnitPath)
		if err != nil {
			return in, fmt.Errorf("looking for pytest's junit.xml: %w", err)
		}
		if ok {
			data, err := c.ReadFile(ctx, JUnitPath, maxJUnitFile)
			if err != nil {
				return in, fmt.Errorf("reading pytest's junit.xml: %w", err)
			}
			cases, err := report.ParseJUnit([]byte(data))
			if err != nil {
				return in, fmt.Errorf("pytest's junit.xml: %w", err)
			}
			in.JUnit, in.HaveJUnit = cases, true
		}
	}
	return in, nil
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
