// Miles-ci's Go test module, in the daggerverse style: it calls the miles-ci
// module's functions through the typed client the engine generates for a
// dependency, on the project's engine, and checks what they return.
// hack/e2e/moduletest.sh generates its bindings in a scratch copy of the
// tree and calls `all` (hack/e2e.sh, suite moduletest); nothing generated is
// committed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"dagger/miles-ci-test/internal/dagger"
)

// MilesCiTest calls the miles-ci module's functions and checks their results.
type MilesCiTest struct{}

// All runs every check in turn and fails with each one that failed.
func (m *MilesCiTest) All(
	ctx context.Context,
	// A Miles checkout (testdata/miles).
	miles *dagger.Directory,
	// The stage fixture hack/e2e/stages.sh builds (a CPU stage with a passing, a failing and a not-run file).
	stages *dagger.Directory,
	// What the miles-ci CLI printed for the same questions: plan.json and ci-plan.json.
	want *dagger.Directory,
) error {
	var errs []error
	for _, c := range []struct {
		name string
		run  func(context.Context, *dagger.Directory, *dagger.Directory, *dagger.Directory) error
	}{
		{"plan", m.plan},
		{"ci plan", m.ciPlan},
		{"messages", m.messages},
		{"stage run", m.stageRun},
		{"check", m.check},
	} {
		if err := c.run(ctx, miles, stages, want); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
		}
	}
	return errors.Join(errs...)
}

// plan: a suite shard's plan is the CLI's, byte for byte, and its typed
// fields name the same suite and files.
func (m *MilesCiTest) plan(ctx context.Context, miles, _, want *dagger.Directory) error {
	ans := dag.MilesCi(dagger.MilesCiOpts{Source: miles}).
		Plan(dagger.MilesCiPlanOpts{Hw: dagger.MilesCiBackendCpu, Suite: "stage-a-cpu"})
	got, err := ans.JSON(ctx)
	if err != nil {
		return err
	}
	if err := same(ctx, want, "plan.json", got); err != nil {
		return err
	}
	var p struct {
		Suite   string `json:"suite"`
		Enabled []struct {
			File string `json:"file"`
		} `json:"enabled"`
	}
	if err := json.Unmarshal([]byte(got), &p); err != nil {
		return fmt.Errorf("the plan is not JSON: %w", err)
	}
	var wantFiles []string
	for _, e := range p.Enabled {
		wantFiles = append(wantFiles, e.File)
	}
	plans, err := ans.Plans(ctx)
	if err != nil {
		return err
	}
	if len(plans) != 1 {
		return fmt.Errorf("wanted one plan, got %d", len(plans))
	}
	suite, err := plans[0].Suite(ctx)
	if err != nil {
		return err
	}
	enabled, err := plans[0].Enabled(ctx)
	if err != nil {
		return err
	}
	var files []string
	for _, e := range enabled {
		f, err := e.File(ctx)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	if suite != "stage-a-cpu" || len(files) == 0 || strings.Join(files, " ") != strings.Join(wantFiles, " ") {
		return fmt.Errorf("wanted the typed plan of stage-a-cpu with files %q, got suite %q with %q", wantFiles, suite, files)
	}
	return nil
}

// ciPlan: the graph of a scheduled run is `miles-ci ci --dry-run --json`'s,
// and its typed jobs are the JSON's jobs, in order.
func (m *MilesCiTest) ciPlan(ctx context.Context, miles, _, want *dagger.Directory) error {
	plan := dag.MilesCi(dagger.MilesCiOpts{Source: miles, Gpus: "none"}).
		Ci(dagger.MilesCiCiOpts{Event: dagger.MilesCiEventSchedule, Schedule: "0 15 * * 6"}).
		Plan()
	got, err := plan.JSON(ctx)
	if err != nil {
		return err
	}
	if err := same(ctx, want, "ci-plan.json", got); err != nil {
		return err
	}
	var r struct {
		Jobs []struct {
			Job   string `json:"job"`
			State string `json:"state"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(got), &r); err != nil {
		return fmt.Errorf("the graph is not JSON: %w", err)
	}
	jobs, err := plan.Jobs(ctx)
	if err != nil {
		return err
	}
	var wantJobs, gotJobs []string
	for _, j := range r.Jobs {
		wantJobs = append(wantJobs, j.Job+"="+j.State)
	}
	for _, j := range jobs {
		key, err := j.Job(ctx)
		if err != nil {
			return err
		}
		state, err := j.State(ctx)
		if err != nil {
			return err
		}
		gotJobs = append(gotJobs, key+"="+state)
	}
	if len(gotJobs) == 0 || strings.Join(gotJobs, " ") != strings.Join(wantJobs, " ") {
		return fmt.Errorf("wanted the typed jobs %q, got %q", wantJobs, gotJobs)
	}
	return nil
}

// messages: a mistyped label's warning comes back in the answer's messages,
// naming the label the checkout knows.
func (m *MilesCiTest) messages(ctx context.Context, miles, _, _ *dagger.Directory) error {
	msgs, err := dag.MilesCi(dagger.MilesCiOpts{Source: miles}).
		Plan(dagger.MilesCiPlanOpts{Hw: dagger.MilesCiBackendCpu, Suite: "stage-a-cpu", Labels: []string{"run-ci-megatorn"}}).
		Messages(ctx)
	if err != nil {
		return err
	}
	var got []string
	for _, msg := range msgs {
		level, err := msg.Level(ctx)
		if err != nil {
			return err
		}
		text, err := msg.Text(ctx)
		if err != nil {
			return err
		}
		if level == "warning" && strings.Contains(text, "did you mean run-ci-megatron?") {
			return nil
		}
		got = append(got, level+": "+text)
	}
	return fmt.Errorf("wanted a warning naming run-ci-megatron, got %q", got)
}

// stageRun: a CPU shard runs and its results say which file failed; assert
// fails naming it.
func (m *MilesCiTest) stageRun(ctx context.Context, _, stages, _ *dagger.Directory) error {
	// The fixture's first test wants an HF_TOKEN; the secret goes through with-secrets.
	token := dag.SetSecret("HF_TOKEN", "e2e-moduletest-hf-token-0123456789")
	run := dag.MilesCi(dagger.MilesCiOpts{Source: stages, Gpus: "none"}).
		WithSecrets(dagger.MilesCiWithSecretsOpts{HfToken: token}).
		Stage("stage-b-cpu").Shard(1).Test()
	code, err := run.ExitCode(ctx)
	if err != nil {
		return err
	}
	verdict, err := run.Verdict(ctx)
	if err != nil {
		return err
	}
	if code != 1 || verdict != "failed" {
		return fmt.Errorf("wanted exit code 1 and verdict failed, got %d and %q", code, verdict)
	}
	data, err := run.Results().File("summary.json").Contents(ctx)
	if err != nil {
		return err
	}
	var s struct {
		Image string `json:"image"`
		Tests []struct {
			File   string `json:"file"`
			Status string `json:"status"`
		} `json:"tests"`
	}
	if err := json.Unmarshal([]byte(data), &s); err != nil {
		return fmt.Errorf("summary.json is not JSON: %w", err)
	}
	var statuses []string
	for _, t := range s.Tests {
		statuses = append(statuses, t.Status)
	}
	if s.Image != "python:3.11" || strings.Join(statuses, " ") != "pass fail not-run" {
		return fmt.Errorf("wanted image python:3.11 and statuses pass fail not-run, got %q and %q", s.Image, statuses)
	}
	err = run.Assert(ctx)
	if err == nil || !strings.Contains(err.Error(), "stage-b-cpu failed with exit code 1: tests/fast/test_cpu_b_fail.py (fail)") {
		return fmt.Errorf("wanted assert to fail naming tests/fast/test_cpu_b_fail.py, got %v", err)
	}
	return nil
}

// check: lint, a `dagger check` of a checkout that installs miles-ci, passes
// on a checkout without drift.
func (m *MilesCiTest) check(ctx context.Context, miles, _, _ *dagger.Directory) error {
	return dag.MilesCi(dagger.MilesCiOpts{Source: miles}).Lint(ctx)
}

// same compares a function's answer with the CLI's, byte for byte.
func same(ctx context.Context, want *dagger.Directory, name, got string) error {
	w, err := want.File(name).Contents(ctx)
	if err != nil {
		return err
	}
	if got != w {
		return fmt.Errorf("the module's answer differs from the CLI's %s:\nmodule: %.400s\ncli:    %.400s", name, got, w)
	}
	return nil
}
