package usecase

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

// TestTyposFail: a mistyped stage, backend, suite or event is an
// UnknownError naming the nearest known name, in every use case that takes
// one (both front ends call these).
func TestTyposFail(t *testing.T) {
	const repo = "../testdata/miles"
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"policy --event", func() error {
			return PolicyRequest{Trigger: policy.Trigger{Event: "schedul"}, Frontend: CLI}.Validate()
		}, `--event: unknown event "schedul"; did you mean schedule?`},
		{"plan --suite", func() error {
			_, err := Plan(ctx, PlanRequest{Repo: repo, Request: policy.PlanRequest{HW: policy.CPU, Suite: "stage-a-cpuu"}})
			return err
		}, `--suite: unknown cpu suite "stage-a-cpuu"; did you mean stage-a-cpu?`},
		{"plan --pool --suites", func() error {
			_, err := PlanPool(PoolInputs{Repo: "../testdata/miles-b200pool", Request: policy.PoolRequest{Suites: []string{"stage-c-4-gpu-b20"}, Cadence: policy.Regular}})
			return err
		}, `--suites: unknown B200 pool suite "stage-c-4-gpu-b20"; did you mean stage-c-4-gpu-b200?`},
		{"run --stage", func() error {
			_, err := Stage(Inputs{Repo: repo, Stage: "stage-b-cpuu"})
			return err
		}, `unknown stage "stage-b-cpuu"; did you mean stage-b-cpu?`},
		{"history --events", func() error {
			return CheckHistoryEvents([]string{"schedule", "lcoal"})
		}, `--events: unknown event "lcoal"; did you mean local?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var unknown *UnknownError
			if !errors.As(err, &unknown) {
				t.Fatalf("wanted an UnknownError, got %v", err)
			}
			if got := err.Error(); !strings.HasPrefix(got, tc.want) || !strings.Contains(got, "(the known ones: ") {
				t.Errorf("wanted %q and the known ones, got %q", tc.want, got)
			}
		})
	}
}

// TestKnownNamesPass: the real names, and GitHub events miles-ci does not
// model (Miles answers those itself), are no typo.
func TestKnownNamesPass(t *testing.T) {
	if err := CheckEvent("--event", "push", policyEvents); err != nil {
		t.Errorf("wanted push to pass to Miles' own answer, got %v", err)
	}
	if err := CheckHistoryEvents([]string{"schedule", "local", "push"}); err != nil {
		t.Errorf("wanted no error, got %v", err)
	}
}

// TestLabelWarnings: a run-ci-* or run-on-* label the checkout does not
// know warns with the nearest known one; known, scope and unrelated labels
// do not.
func TestLabelWarnings(t *testing.T) {
	tables, err := policy.LoadTables("../testdata/miles")
	if err != nil {
		t.Fatal(err)
	}
	got := LabelWarnings(tables, []string{"run-ci-megatorn", "run-ci-megatron", "run-ci-all", "run-ci-image", "bug", "nightly", "run-ci-megatorn", "run-ci-zzzzzzzzzzzz"}, "--labels")
	want := []string{
		"--labels: run-ci-megatorn is not a label this checkout knows (tests/ci/labels.py), so it selects nothing; did you mean run-ci-megatron?",
		"--labels: run-ci-zzzzzzzzzzzz is not a label this checkout knows (tests/ci/labels.py), so it selects nothing",
	}
	if len(got) != len(want) {
		t.Fatalf("wanted %q, got %v", want, got)
	}
	for i := range want {
		if got[i].Level != "warning" || got[i].Text != want[i] {
			t.Errorf("wanted %q, got %q", want[i], got[i].Text)
		}
	}
	// plan keeps Miles' answer and warns beside it.
	ans, err := Plan(context.Background(), PlanRequest{Repo: "../testdata/miles", Request: policy.PlanRequest{HW: policy.CPU, Suite: "stage-a-cpu", Labels: []string{"run-ci-megatorn"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !messagesContain(ans.Messages, "did you mean run-ci-megatron?") {
		t.Errorf("wanted plan to warn about run-ci-megatorn, got %v", ans.Messages)
	}
	// policy warns about a PR's labels.
	pans, err := Policy(PolicyRequest{Repo: "../testdata/miles", Tables: tables, Trigger: policy.Trigger{Event: "pull_request", PRLabelsJSON: `["run-ci-fsdpp"]`}})
	if err != nil {
		t.Fatal(err)
	}
	if !messagesContain(pans.Messages, "the PR's labels: run-ci-fsdpp is not a label this checkout knows (tests/ci/labels.py), so it selects nothing; did you mean run-ci-fsdp?") {
		t.Errorf("wanted policy to warn about run-ci-fsdpp, got %v", pans.Messages)
	}
	// explain warns too.
	eans, err := Explain(ExplainInputs{Repo: "../testdata/miles", File: "tests/fast/test_arguments.py", Cadence: policy.Regular, Labels: []string{"run-ci-megatorn"}})
	if err != nil {
		t.Fatal(err)
	}
	if !messagesContain(eans.Messages, "--labels: run-ci-megatorn is not a label this checkout knows") {
		t.Errorf("wanted explain to warn about run-ci-megatorn, got %v", eans.Messages)
	}
	// run carries it in the request's notes.
	req, err := Stage(Inputs{Repo: "../testdata/miles", Stage: "stage-b-cpu", Labels: []string{"run-ci-megatorn"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(req.Notes, "\n"), "did you mean run-ci-megatron?") {
		t.Errorf("wanted the run's notes to warn about run-ci-megatorn, got %q", req.Notes)
	}
}

func messagesContain(msgs []Message, text string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Text, text) {
			return true
		}
	}
	return false
}
