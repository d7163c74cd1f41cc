// Package engine adapts the Dagger Go SDK (dagger.io/dagger) to
// stagerun.Container: the one adapter both front ends render a spec with.
// The command connects to the engine the SDK finds (Connect:
// _EXPERIMENTAL_DAGGER_RUNNER_HOST, else the installed dagger CLI's); the
// Dagger module attaches to the engine session its function runs in, with
// the inputs it was handed (Attach).
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"dagger.io/dagger"
	"dagger.io/dagger/engineconn"

	"github.com/radixark/miles-ci/stagerun"
)

// Inputs are the host things a run hands to the engine.
type Inputs struct {
	// Repo is the Miles checkout to upload.
	Repo string
	// Secrets maps secret names (WANDB_API_KEY, ...) to values; absent ones are not set.
	Secrets map[string]string
	// Models and Datasets are host folders to mount ("" = none).
	Models, Datasets string
	// RunnerHost is the engine's address (a fleet host's: tcp://,
	// unix://, ...); "" is the one the environment names.
	RunnerHost string
}

// Session is a connection to an engine with the run's inputs loaded.
type Session struct {
	client  *dagger.Client
	source  *dagger.Directory
	secrets map[string]*dagger.Secret
	data    map[stagerun.DataName]*dagger.Directory
	// proc is the dagger session miles-ci started (nil when the SDK
	// started it, or in a module's function).
	proc *sessionProc
	// runnerHost is the engine's address ("" when not known).
	runnerHost string
}

// Connect opens a session; the engine's progress goes to log (nil:
// nowhere). An engine at a tcp:// or unix:// address that refuses the
// connection (or has no socket) is an error at once. miles-ci runs the
// `dagger session` itself (the CLI of _EXPERIMENTAL_DAGGER_CLI_BIN, else
// the one the SDK downloads), so that it ends with the session: Close and
// a cancelled ctx stop it within closeGrace+termGrace, its process group
// included, and it dies with miles-ci.
func Connect(ctx context.Context, in Inputs, log io.Writer) (*Session, error) {
	runnerHost := os.Getenv("_EXPERIMENTAL_DAGGER_RUNNER_HOST")
	if in.RunnerHost != "" {
		runnerHost = in.RunnerHost
	}
	failed := func(err error) (*Session, error) {
		_, lookErr := exec.LookPath("dagger")
		return nil, fmt.Errorf("connecting to a Dagger engine: %w; %s", err, ConnectHint(runnerHost, lookErr == nil))
	}
	if err := reach(ctx, runnerHost); err != nil {
		return failed(err)
	}
	var client *dagger.Client
	var proc *sessionProc
	if _, inModule := os.LookupEnv("DAGGER_SESSION_PORT"); inModule {
		// Inside a Dagger module's function the SDK uses that session.
		var opts []dagger.ClientOpt
		if log != nil {
			opts = append(opts, dagger.WithLogOutput(log))
		}
		if in.RunnerHost != "" {
			opts = append(opts, dagger.WithRunnerHost(in.RunnerHost))
		}
		c, err := dagger.Connect(ctx, opts...)
		if err != nil {
			return failed(err)
		}
		client = c
	} else {
		bin, err := daggerCLI(ctx, log)
		if err != nil {
			return failed(err)
		}
		p, params, err := startSession(ctx, bin, in.RunnerHost, log)
		if err != nil {
			return failed(err)
		}
		if client, err = dagger.Connect(ctx, dagger.WithConn(newConn(p, params))); err != nil {
			p.stop()
			return failed(err)
		}
		proc = p
	}
	s := &Session{
		client:     client,
		proc:       proc,
		runnerHost: runnerHost,
		source:     client.Host().Directory(in.Repo, dagger.HostDirectoryOpts{Exclude: stagerun.SourceExclude}),
		secrets:    map[string]*dagger.Secret{},
		data:       map[stagerun.DataName]*dagger.Directory{},
	}
	for name, value := range in.Secrets {
		s.secrets[name] = client.SetSecret(name, value)
	}
	if in.Models != "" {
		s.data[stagerun.Models] = client.Host().Directory(in.Models)
	}
	if in.Datasets != "" {
		s.data[stagerun.Datasets] = client.Host().Directory(in.Datasets)
	}
	return s, nil
}

// daggerCLI is the dagger CLI the SDK would run: _EXPERIMENTAL_DAGGER_CLI_BIN,
// else the release of the SDK's version, downloaded once into the user's
// cache.
func daggerCLI(ctx context.Context, log io.Writer) (string, error) {
	if bin := os.Getenv("_EXPERIMENTAL_DAGGER_CLI_BIN"); bin != "" {
		return exec.LookPath(bin)
	}
	return engineconn.CLIDownloader{Ref: engineconn.CLIVersion, Release: true, LogOutput: log, CleanupOld: true}.Download(ctx)
}

// Check says whether the session's engine still answers: nil when it
// does; an error when its dagger session ended, its address refuses the
// connection (an engine at tcp:// or unix:// that died: said at once), or
// the engine gave no answer within CheckTimeout (its host is gone).
func (s *Session) Check(ctx context.Context) error {
	if s == nil || s.client == nil {
		return errors.New("no session")
	}
	if s.proc != nil {
		if err := s.proc.ended(); err != nil {
			return err
		}
	}
	if err := reach(ctx, s.runnerHost); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	if _, err := s.client.Version(ctx); err != nil {
		if s.proc != nil {
			if ended := s.proc.ended(); ended != nil {
				return ended
			}
		}
		return fmt.Errorf("its engine does not answer: %w", err)
	}
	return nil
}

// Handles are a run's inputs the engine already holds, by their IDs: what a
// Dagger module's function was handed (its checkout, secrets and data
// folders). Absent ones are left out.
type Handles struct {
	Source  string
	Secrets map[string]string
	Data    map[stagerun.DataName]string
}

// Attach opens a session on the engine session this process runs in: a
// Dagger module's function, where the engine sets DAGGER_SESSION_PORT and
// DAGGER_SESSION_TOKEN. Outside one it fails rather than start an engine.
func Attach(ctx context.Context, in Handles) (*Session, error) {
	conn, ok, err := engineconn.FromSessionEnv()
	if err != nil {
		return nil, fmt.Errorf("attaching to the engine session: %w", err)
	}
	if !ok {
		return nil, errors.New("attaching to the engine session: DAGGER_SESSION_PORT is not set; Attach runs inside a Dagger module's function (use Connect elsewhere)")
	}
	client, err := dagger.Connect(ctx, dagger.WithConn(conn))
	if err != nil {
		return nil, fmt.Errorf("attaching to the engine session: %w", err)
	}
	s := &Session{
		client:  client,
		source:  client.LoadDirectoryFromID(dagger.DirectoryID(in.Source)),
		secrets: map[string]*dagger.Secret{},
		data:    map[stagerun.DataName]*dagger.Directory{},
	}
	for name, id := range in.Secrets {
		s.secrets[name] = client.LoadSecretFromID(dagger.SecretID(id))
	}
	for name, id := range in.Data {
		s.data[name] = client.LoadDirectoryFromID(dagger.DirectoryID(id))
	}
	return s, nil
}

// ContainerID is the engine ID of a container of the session, for a
// module's function to return it through its own bindings.
func ContainerID(ctx context.Context, c stagerun.Container) (string, error) {
	id, err := c.(ctr).c.ID(ctx)
	return string(id), explain(err)
}

// ConnectHint says how to get an engine when none answered: with no runner
// host and no dagger CLI, the environment is what is missing (the project's
// engine may well run); with a runner host, that engine does not answer.
func ConnectHint(runnerHost string, haveCLI bool) string {
	switch {
	case runnerHost != "":
		return fmt.Sprintf("the engine at _EXPERIMENTAL_DAGGER_RUNNER_HOST=%s does not answer; check it runs (with this project's engine: bash hack/engine/engine.sh status, then start)", runnerHost)
	case haveCLI:
		return "the dagger CLI on PATH could not start its engine (it needs Docker or Podman); or point _EXPERIMENTAL_DAGGER_RUNNER_HOST at a running engine"
	}
	return `_EXPERIMENTAL_DAGGER_RUNNER_HOST is not set and no dagger CLI is on PATH; with this project's engine, run eval "$(bash hack/engine/engine.sh env)" (bash hack/engine/engine.sh status says whether it runs; start starts it), or install the dagger CLI`
}

// Close ends the session; a session that never opened (nil) has nothing
// to end.
func (s *Session) Close() error {
	if s == nil || s.client == nil {
		return nil
	}
	return s.client.Close()
}

// Container is an empty container of the session.
func (s *Session) Container() stagerun.Container {
	return ctr{s: s, c: s.client.Container()}
}

// ctr is a *dagger.Container as a stagerun.Container.
type ctr struct {
	s *Session
	c *dagger.Container
}

func (x ctr) with(c *dagger.Container) stagerun.Container { return ctr{s: x.s, c: c} }

func (x ctr) From(image string) stagerun.Container { return x.with(x.c.From(image)) }

func (x ctr) FromCheckoutDockerfile(dockerfile string) stagerun.Container {
	return x.with(x.s.source.DockerBuild(dagger.DirectoryDockerBuildOpts{Dockerfile: dockerfile}))
}

func (x ctr) WithEnvVariable(name, value string) stagerun.Container {
	return x.with(x.c.WithEnvVariable(name, value))
}

func (x ctr) WithoutEnvVariable(name string) stagerun.Container {
	return x.with(x.c.WithoutEnvVariable(name))
}

func (x ctr) WithWorkdir(path string) stagerun.Container { return x.with(x.c.WithWorkdir(path)) }

func (x ctr) WithMountedCache(path, key string, sharing stagerun.CacheSharing) stagerun.Container {
	return x.with(x.c.WithMountedCache(path, x.s.client.CacheVolume(key),
		dagger.ContainerWithMountedCacheOpts{Sharing: dagger.CacheSharingMode(sharing)}))
}

func (x ctr) WithoutMount(path string) stagerun.Container { return x.with(x.c.WithoutMount(path)) }

func (x ctr) WithMountedTemp(path string, size int64) stagerun.Container {
	return x.with(x.c.WithMountedTemp(path, dagger.ContainerWithMountedTempOpts{Size: int(size)}))
}

func (x ctr) WithSourceFile(path, rel string) stagerun.Container {
	return x.with(x.c.WithFile(path, x.s.source.File(rel)))
}

func (x ctr) WithSourceDirectory(path string) stagerun.Container {
	return x.with(x.c.WithDirectory(path, x.s.source))
}

func (x ctr) WithDataDirectory(path string, name stagerun.DataName) stagerun.Container {
	d, ok := x.s.data[name]
	if !ok {
		return x
	}
	return x.with(x.c.WithMountedDirectory(path, d))
}

func (x ctr) WithSecretVariable(name string) stagerun.Container {
	s, ok := x.s.secrets[name]
	if !ok {
		return x
	}
	return x.with(x.c.WithSecretVariable(name, s))
}

func (x ctr) WithGPUs(devices []string) stagerun.Container {
	if len(devices) == 0 {
		return x.with(x.c.ExperimentalWithAllGPUs())
	}
	return x.with(x.c.ExperimentalWithGPU(devices))
}

func (x ctr) WithExec(argv []string, o stagerun.ExecOptions) stagerun.Container {
	opts := dagger.ContainerWithExecOpts{InsecureRootCapabilities: o.Privileged}
	if o.AnyExitCode {
		opts.Expect = dagger.ReturnTypeAny
	}
	return x.with(x.c.WithExec(argv, opts))
}

func (x ctr) WithNewFile(path, contents string) stagerun.Container {
	return x.with(x.c.WithNewFile(path, contents))
}

func (x ctr) Stdout(ctx context.Context) (string, error) {
	out, err := x.c.Stdout(ctx)
	return out, explain(err)
}

func (x ctr) Stderr(ctx context.Context) (string, error) {
	out, err := x.c.Stderr(ctx)
	return out, explain(err)
}

func (x ctr) ExitCode(ctx context.Context) (int, error) {
	code, err := x.c.ExitCode(ctx)
	return code, explain(err)
}

func (x ctr) Stat(ctx context.Context, path string) (stagerun.FileInfo, error) {
	// Nothing is followed: a symlink the tests left is a symlink, never its target.
	ok, err := x.c.Exists(ctx, path, dagger.ContainerExistsOpts{DoNotFollowSymlinks: true})
	if err != nil {
		return stagerun.FileInfo{}, explain(err)
	}
	if !ok {
		return stagerun.FileInfo{Type: stagerun.FileMissing}, nil
	}
	st := x.c.Stat(path, dagger.ContainerStatOpts{DoNotFollowSymlinks: true})
	t, err := st.FileType(ctx)
	if err != nil {
		return stagerun.FileInfo{}, explain(err)
	}
	info := stagerun.FileInfo{Type: stagerun.FileOther}
	switch t {
	case dagger.FileTypeRegular:
		info.Type = stagerun.FileRegular
		if info.Size, err = st.Size(ctx); err != nil {
			return stagerun.FileInfo{}, explain(err)
		}
	case dagger.FileTypeDirectory:
		info.Type = stagerun.FileDirectory
	case dagger.FileTypeSymlink:
		info.Type = stagerun.FileSymlink
	}
	return info, nil
}

func (x ctr) Entries(ctx context.Context, path string) ([]string, error) {
	names, err := x.c.Directory(path).Entries(ctx)
	return names, explain(err)
}

func (x ctr) ReadFile(ctx context.Context, path string, limit int) (string, error) {
	f := x.c.File(path)
	size, err := f.Size(ctx)
	if err != nil {
		return "", explain(err)
	}
	if size > limit {
		return "", fmt.Errorf("%s is %d bytes, more than the %d miles-ci reads", path, size, limit)
	}
	out, err := f.Contents(ctx)
	return out, explain(err)
}

func (x ctr) ImageRef(ctx context.Context) (string, error) {
	ref, err := x.c.ImageRef(ctx)
	return ref, explain(err)
}

func (x ctr) Publish(ctx context.Context, ref string) (string, error) {
	out, err := x.c.Publish(ctx, ref)
	return out, explain(err)
}

func (x ctr) SourceFileDigest(ctx context.Context, rel string) (string, error) {
	d, err := x.s.source.File(rel).Digest(ctx, dagger.FileDigestOpts{ExcludeMetadata: true})
	return d, explain(err)
}

// explain adds the failed command and the end of its output to an engine
// error (a failing step deep in the chain otherwise reads "exit code: 1").
func explain(err error) error {
	var e *dagger.ExecError
	if errors.As(err, &e) {
		return fmt.Errorf("%s: %w", stagerun.ExecFailure(e.Cmd, e.ExitCode, e.Stdout, e.Stderr), err)
	}
	return err
}
