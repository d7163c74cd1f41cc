package main

import (
	"context"
	"fmt"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// session is what a module call hands to its containers: the constructor's
// checkout, secrets and data folders, attached to the engine adapter the
// command uses too (cmd/miles-ci/engine), so both render a spec with one
// adapter.
type session struct {
	secrets map[string]*dagger.Secret
	eng     *engine.Session
}

// newSession attaches the constructor's inputs to the engine adapter by their
// IDs; absent secrets and folders are left out, and stagerun.HandedSecrets
// leaves out every secret of a fork PR's run (fork). Close it when done.
func (m *MilesCi) newSession(ctx context.Context, fork bool) (*session, error) {
	given := map[string]*dagger.Secret{
		stagerun.SecretWandb: m.WandbApiKey,
		stagerun.SecretNeon:  m.NeonDatabaseUrl,
		stagerun.SecretHF:    m.HfToken,
	}
	// stagerun decides what a fork's run is handed (nothing).
	s := &session{secrets: stagerun.HandedSecrets(fork, func(name string) (*dagger.Secret, bool) { return given[name], given[name] != nil })}
	source, err := m.Source.ID(ctx)
	if err != nil {
		return nil, err
	}
	in := engine.Handles{Source: string(source), Secrets: map[string]string{}, Data: map[stagerun.DataName]string{}}
	for name, secret := range s.secrets {
		id, err := secret.ID(ctx)
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		in.Secrets[name] = string(id)
	}
	for name, dir := range map[stagerun.DataName]*dagger.Directory{stagerun.Models: m.Models, stagerun.Datasets: m.Datasets} {
		if dir == nil {
			continue
		}
		id, err := dir.ID(ctx)
		if err != nil {
			return nil, fmt.Errorf("data folder %s: %w", name, err)
		}
		in.Data[name] = string(id)
	}
	if s.eng, err = engine.Attach(ctx, in); err != nil {
		return nil, err
	}
	return s, nil
}

// close ends the session's connection.
func (s *session) close() { _ = s.eng.Close() }

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
func (s *session) container() stagerun.Container { return s.eng.Container() }

// export returns a container of the session through the module's own
// bindings, to hand it back to the caller.
func (s *session) export(ctx context.Context, c stagerun.Container) (*dagger.Container, error) {
	id, err := engine.ContainerID(ctx, c)
	if err != nil {
		return nil, err
	}
	return dag.LoadContainerFromID(dagger.ContainerID(id)), nil
}

// sourceFiles reads the checkout's files for the metric gate
// (usecase.GateJudge.Source): a regular file's contents, nil when there is
// none, at most a test file's bound.
func sourceFiles(ctx context.Context, src *dagger.Directory) func(rel string) ([]byte, error) {
	return func(rel string) ([]byte, error) {
		ok, err := src.Exists(ctx, rel, dagger.DirectoryExistsOpts{ExpectedType: dagger.ExistsTypeRegularType, DoNotFollowSymlinks: true})
		if err != nil || !ok {
			return nil, err
		}
		f := src.File(rel)
		size, err := f.Size(ctx)
		if err != nil {
			return nil, err
		}
		if int64(size) > fsinput.TestFile.Max {
			return nil, fmt.Errorf("%s is %d bytes, more than the %d miles-ci reads of a test file", rel, size, fsinput.TestFile.Max)
		}
		text, err := f.Contents(ctx)
		return []byte(text), err
	}
}
