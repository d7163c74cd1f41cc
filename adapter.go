package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/pipeline"
	"github.com/radixark/miles-ci/report"
)

// session holds what a module call hands to its containers: the checkout,
// the secrets and the data folders given to the constructor.
type session struct {
	source  *dagger.Directory
	secrets map[string]*dagger.Secret
	data    map[pipeline.DataName]*dagger.Directory
}

// newSession collects the constructor's inputs; absent secrets and folders are
// left out, and pipeline.HandedSecrets leaves out every secret of a fork PR's
// run (fork).
func (m *MilesCi) newSession(fork bool) *session {
	given := map[string]*dagger.Secret{
		pipeline.SecretWandb: m.WandbApiKey,
		pipeline.SecretNeon:  m.NeonDatabaseUrl,
		pipeline.SecretHF:    m.HfToken,
	}
	// pipeline decides what a fork's run is handed (nothing).
	s := &session{source: m.Source, data: map[pipeline.DataName]*dagger.Directory{},
		secrets: pipeline.HandedSecrets(fork, func(name string) (*dagger.Secret, bool) { return given[name], given[name] != nil })}
	if m.Models != nil {
		s.data[pipeline.Models] = m.Models
	}
	if m.Datasets != nil {
		s.data[pipeline.Datasets] = m.Datasets
	}
	return s
}

// masker masks the session's secret values in everything a run exports;
// a value too short to mask is refused (report.NewMasker).
func (s *session) masker(ctx context.Context) (*report.Masker, error) {
	values := map[string]string{}
	for name, secret := range s.secrets {
		v, err := secret.Plaintext(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading secret %s: %w", name, err)
		}
		values[name] = v
	}
	return report.NewMasker(values)
}

// container is an empty container of the session.
func (s *session) container() pipeline.Container { return ctr{s: s, c: dag.Container()} }

// unwrap returns the Dagger container behind a pipeline.Container.
func unwrap(c pipeline.Container) *dagger.Container { return c.(ctr).c }

// ctr is a module *dagger.Container as a pipeline.Container (the
// dagger.io/dagger twin is cmd/miles-ci/engine).
type ctr struct {
	s *session
	c *dagger.Container
}

func (x ctr) with(c *dagger.Container) pipeline.Container { return ctr{s: x.s, c: c} }

func (x ctr) From(image string) pipeline.Container { return x.with(x.c.From(image)) }

func (x ctr) FromCheckoutDockerfile(dockerfile string) pipeline.Container {
	return x.with(x.s.source.DockerBuild(dagger.DirectoryDockerBuildOpts{Dockerfile: dockerfile}))
}

func (x ctr) WithEnvVariable(name, value string) pipeline.Container {
	return x.with(x.c.WithEnvVariable(name, value))
}

func (x ctr) WithoutEnvVariable(name string) pipeline.Container {
	return x.with(x.c.WithoutEnvVariable(name))
}

func (x ctr) WithWorkdir(path string) pipeline.Container { return x.with(x.c.WithWorkdir(path)) }

func (x ctr) WithMountedCache(path, key string, sharing pipeline.CacheSharing) pipeline.Container {
	return x.with(x.c.WithMountedCache(path, dag.CacheVolume(key),
		dagger.ContainerWithMountedCacheOpts{Sharing: dagger.CacheSharingMode(sharing)}))
}

func (x ctr) WithoutMount(path string) pipeline.Container { return x.with(x.c.WithoutMount(path)) }

func (x ctr) WithMountedTemp(path string, size int64) pipeline.Container {
	return x.with(x.c.WithMountedTemp(path, dagger.ContainerWithMountedTempOpts{Size: int(size)}))
}

func (x ctr) WithSourceFile(path, rel string) pipeline.Container {
	return x.with(x.c.WithFile(path, x.s.source.File(rel)))
}

func (x ctr) WithSourceDirectory(path string) pipeline.Container {
	return x.with(x.c.WithDirectory(path, x.s.source))
}

func (x ctr) WithDataDirectory(path string, name pipeline.DataName) pipeline.Container {
	d, ok := x.s.data[name]
	if !ok {
		return x
	}
	return x.with(x.c.WithMountedDirectory(path, d))
}

func (x ctr) WithSecretVariable(name string) pipeline.Container {
	s, ok := x.s.secrets[name]
	if !ok {
		return x
	}
	return x.with(x.c.WithSecretVariable(name, s))
}

func (x ctr) WithGPUs(devices []string) pipeline.Container {
	if len(devices) == 0 {
		return x.with(x.c.ExperimentalWithAllGPUs())
	}
	return x.with(x.c.ExperimentalWithGPU(devices))
}

func (x ctr) WithExec(argv []string, o pipeline.ExecOptions) pipeline.Container {
	opts := dagger.ContainerWithExecOpts{InsecureRootCapabilities: o.Privileged}
	if o.AnyExitCode {
		opts.Expect = dagger.ReturnTypeAny
	}
	return x.with(x.c.WithExec(argv, opts))
}

func (x ctr) WithNewFile(path, contents string) pipeline.Container {
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

func (x ctr) Stat(ctx context.Context, path string) (pipeline.FileInfo, error) {
	// Nothing is followed: a symlink the tests left is a symlink, never its target.
	ok, err := x.c.Exists(ctx, path, dagger.ContainerExistsOpts{DoNotFollowSymlinks: true})
	if err != nil {
		return pipeline.FileInfo{}, explain(err)
	}
	if !ok {
		return pipeline.FileInfo{Type: pipeline.FileMissing}, nil
	}
	st := x.c.Stat(path, dagger.ContainerStatOpts{DoNotFollowSymlinks: true})
	t, err := st.FileType(ctx)
	if err != nil {
		return pipeline.FileInfo{}, explain(err)
	}
	info := pipeline.FileInfo{Type: pipeline.FileOther}
	switch t {
	case dagger.FileTypeRegular:
		info.Type = pipeline.FileRegular
		if info.Size, err = st.Size(ctx); err != nil {
			return pipeline.FileInfo{}, explain(err)
		}
	case dagger.FileTypeDirectory:
		info.Type = pipeline.FileDirectory
	case dagger.FileTypeSymlink:
		info.Type = pipeline.FileSymlink
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
		return fmt.Errorf("%s: %w", pipeline.ExecFailure(e.Cmd, e.ExitCode, e.Stdout, e.Stderr), err)
	}
	return err
}
