package main

import (
	"context"

	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/pipeline"
	"github.com/radixark/miles-ci/usecase"
)

// File selects a single registered test file to run alone (/rerun-test, rules §10).
// +cache="session"
func (m *MilesCi) File(
	ctx context.Context,
	// The repo-relative test file, e.g. tests/e2e/megatron/test_x.py.
	path string,
) (*FileRun, error) {
	f := &FileRun{Ci: m, Path: path}
	var err error
	if f.PullRequest, err = m.pullRequest(ctx, false); err != nil {
		return nil, err
	}
	if _, err := f.request(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// FileRun is one test file run alone in its stage's container.
type FileRun struct {
	// +private
	Ci *MilesCi
	// The repo-relative test file.
	Path string
	// +private
	PullRequest string
}

// request builds the file run's request.
func (f *FileRun) request(ctx context.Context) (pipeline.Request, error) {
	return withCheckout(ctx, f.Ci.Source, func(dir string) (pipeline.Request, error) {
		in, err := f.Ci.inputs(ctx, dir, f.PullRequest)
		if err != nil {
			return pipeline.Request{}, err
		}
		in.File = f.Path
		in.Python = containerPython{source: f.Ci.Source}
		return usecase.File(in)
	})
}

// Plan returns the file run's plan as JSON (`miles-ci file-plan --json`).
func (f *FileRun) Plan(ctx context.Context) (string, error) {
	req, err := f.request(ctx)
	if err != nil {
		return "", err
	}
	return jsonString(req.File)
}

// Spec returns the file run's container spec as JSON (`miles-ci file-run ... --dry-run --json`).
func (f *FileRun) Spec(ctx context.Context) (string, error) {
	req, err := f.request(ctx)
	if err != nil {
		return "", err
	}
	return specJSON(req)
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
