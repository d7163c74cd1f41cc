package main

import (
	"context"

	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

// File selects a single registered test file to run alone (/rerun-test, rules §10).
// +cache="session"
func (m *MilesCi) File(
	ctx context.Context,
	// The repo-relative test file, e.g. tests/e2e/megatron/test_x.py.
	path string,
) (*FileRun, error) {
	pr, err := m.pullRequest(ctx, false)
	if err != nil {
		return nil, err
	}
	// The file is planned here once; its plan, spec, container and test read
	// the request from the Planned field.
	planned, err := withCheckout(ctx, m.Source, func(dir string) (string, error) {
		in, err := m.inputs(ctx, dir, pr)
		if err != nil {
			return "", err
		}
		in.File = path
		in.Python = containerPython{source: m.Source}
		_, planned, err := usecase.PlanFile(in)
		return planned, err
	})
	if err != nil {
		return nil, err
	}
	return &FileRun{Ci: m, Path: path, Planned: planned}, nil
}

// FileRun is one test file run alone in its stage's container.
type FileRun struct {
	// +private
	Ci *MilesCi
	// The repo-relative test file.
	Path string
	// +private
	Planned string
}

// request is the file run's request, as File planned it.
func (f *FileRun) request(context.Context) (stagerun.Request, error) {
	return usecase.DecodeRequest(f.Planned)
}

// Plan returns the file run's plan; its json is `miles-ci file-plan --json`.
func (f *FileRun) Plan(ctx context.Context) (*FilePlan, error) {
	req, err := f.request(ctx)
	if err != nil {
		return nil, err
	}
	return answerOf[FilePlan](req.File, notesOf(req.Notes))
}

// Spec returns the file run's container spec; its json is `miles-ci file-run ... --dry-run --json`.
func (f *FileRun) Spec(ctx context.Context) (*ContainerSpec, error) {
	req, err := f.request(ctx)
	if err != nil {
		return nil, err
	}
	return specAnswer(req)
}

// Container returns the file run's container, ready to run.
// +cache="session"
func (f *FileRun) Container(ctx context.Context) (*dagger.Container, error) {
	req, err := f.request(ctx)
	if err != nil {
		return nil, err
	}
	return f.Ci.container(ctx, req)
}

// Test runs the file as /rerun-test does and returns the results.
// +cache="never"
func (f *FileRun) Test(
	ctx context.Context,
	// Run id: calls with the same id share one run; without one every call runs anew.
	// +optional
	runId string,
) (*TestRun, error) {
	req, err := f.request(ctx)
	if err != nil {
		return nil, err
	}
	return f.Ci.test(ctx, req, runId)
}
