package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/usecase"
)

// checkoutImage is the image the module runs a checkout's own tests/ci code
// in: Python 3.11, as Miles' hosted plan and policy jobs (hack/images serves
// a stand-in of it to the hermetic engine).
const checkoutImage = "python:3.11"

// checkoutRoot and checkoutScratch are where the checkout and the driver's
// scratch folder are in that container.
const (
	checkoutRoot    = "/src"
	checkoutScratch = "/tmp/miles-ci-work"
)

// containerPython runs miles-ci's driver (usecase.Checkout) in a Python 3.11
// container with the checkout mounted: the module's --planner checkout and
// verify. Nothing but the checkout reaches it: no secret, no token.
type containerPython struct {
	source *dagger.Directory
}

func (p containerPython) String() string { return checkoutImage + " container" }

// Run implements usecase.Interpreter on the engine.
func (p containerPython) Run(ctx context.Context, driver string, request func(root, scratch string) ([]byte, error)) ([]byte, []byte, error) {
	in, err := request(checkoutRoot, checkoutScratch)
	if err != nil {
		return nil, nil, err
	}
	c := dag.Container().From(checkoutImage).
		WithDirectory(checkoutRoot, p.source).
		WithNewFile("/tmp/miles_ci_driver.py", driver).
		WithWorkdir(checkoutRoot).
		WithExec([]string{"mkdir", "-p", checkoutScratch})
	for _, kv := range usecase.DriverEnv(checkoutRoot, checkoutScratch) {
		k, v, _ := strings.Cut(kv, "=")
		c = c.WithEnvVariable(k, v)
	}
	c = c.WithExec([]string{"python3", "-S", "-B", "/tmp/miles_ci_driver.py"},
		dagger.ContainerWithExecOpts{Stdin: string(in), Expect: dagger.ReturnTypeAny})
	stdout, err := c.Stdout(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("running the checkout's tests/ci code in %s: %w", checkoutImage, err)
	}
	stderr, err := c.Stderr(ctx)
	if err != nil {
		return nil, nil, err
	}
	return []byte(stdout), []byte(stderr), nil
}

// checkout is the usecase.Checkout of a source exported to dir, its code run
// in the Python 3.11 container.
func checkout(dir string, source *dagger.Directory) (*usecase.Checkout, error) {
	return usecase.OpenCheckout(dir, containerPython{source: source})
}

// Verify checks miles-ci's answers against the checkout's own tests/ci code.
// It runs that code (run_suite.py --list-only, python -m tests.ci.ci_policy,
// python -m tests.ci.file_run) in a Python 3.11 container beside miles-ci on
// cases generated from the checkout's tables, as `miles-ci verify` does, and
// fails on any difference (or a checkout miles-ci does not cover) with the
// report; the report goes to stderr.
//
// +check
// +cache="session"
func (m *MilesCi) Verify(
	ctx context.Context,
	// At most this many cases per command (default 3000).
	// +optional
	maxCases int,
) error {
	src := m.Source
	_, err := withCheckout(ctx, src, func(dir string) (struct{}, error) {
		rep, err := usecase.Verify(ctx, usecase.VerifyRequest{Repo: dir, MaxCases: maxCases, Interpreter: containerPython{source: src}})
		if err != nil {
			return struct{}{}, err
		}
		rep.Repo = "source"
		text := rep.Text()
		if !rep.OK() {
			return struct{}{}, errors.New(strings.TrimRight(text, "\n"))
		}
		progress(text)
		return struct{}{}, nil
	})
	return err
}

// plannerOf is a --planner argument as usecase's (absent: miles-ci); Dagger
// refuses any other value before the function runs.
func plannerOf(p Planner) usecase.Planner {
	if p == PlannerCheckout {
		return usecase.PlannerCheckout
	}
	return usecase.PlannerMilesCI
}

// checkoutPolicyOf is Policy's request answered by the checkout's own
// ci_policy (usecase.PolicyOfCheckout): its fields are the four outputs of
// rules §3, its json every step output the checkout wrote.
func checkoutPolicyOf(ctx context.Context, dir string, source *dagger.Directory, req usecase.PolicyRequest) (*PolicyAnswer, error) {
	c, err := checkout(dir, source)
	if err != nil {
		return nil, err
	}
	ans, err := usecase.PolicyOfCheckout(ctx, c, req)
	if err != nil {
		return nil, err
	}
	js, err := jsonString(ans)
	if err != nil {
		return nil, err
	}
	return answerWith[PolicyAnswer](usecase.PolicyJSON{Outputs: ans.Outputs}, js, nil, nil)
}

// Lint fails on drift between the checkout's CI tables, workflows and tests.
// Drift is what makes CI skip or mis-run tests (`miles-ci lint`); the report
// goes to stderr when there is none.
//
// +check
// +cache="session"
func (m *MilesCi) Lint(ctx context.Context) error {
	_, err := withCheckout(ctx, m.Source, func(dir string) (struct{}, error) {
		ans, err := usecase.Lint(dir, "source")
		printMessages(ans.Messages)
		if err != nil {
			return struct{}{}, err
		}
		if !ans.OK() {
			return struct{}{}, errors.New(strings.TrimRight(ans.Text(), "\n"))
		}
		progress(ans.Text())
		return struct{}{}, nil
	})
	return err
}
