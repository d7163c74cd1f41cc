package usecase

import (
	"context"
	"errors"
	"github.com/radixark/miles-ci/cirun"
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
	sched := CIRequest{Repo: repo, Event: "schedule", Schedule: "0 15 * * 0-5"}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"ci --only", func() error {
			r := sched
			r.Only = []string{"stage-a-cpu", "stage-z"}
			_, err := CI(ctx, r)
			return err
		}, `--only: unknown stage or backend "stage-z"; did you mean stage-a-cpu?`},
		{"ci --skip backend", func() error {
			r := sched
			r.Skip = []string{"cdua"}
			_, err := CI(ctx, r)
			return err
		}, `--skip: unknown stage or backend "cdua"; did you mean cuda?`},
		{"ci --event", func() error {
			_, err := CI(ctx, CIRequest{Repo: repo, Event: "pull_rqeuest"})
			return err
		}, `--event: unknown event "pull_rqeuest"; did you mean pull_request?`},
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
	if err := checkEvent("--event", "push", policyEvents); err != nil {
		t.Errorf("wanted push to pass to Miles' own answer, got %v", err)
	}
	if err := CheckHistoryEvents([]string{"schedule", "local", "push"}); err != nil {
		t.Errorf("wanted no error, got %v", err)
	}
	r := CIRequest{Repo: "../testdata/miles", Event: "schedule", Schedule: "0 15 * * 0-5", Only: []string{"cpu", "stage-c-2-gpu-h200"}, Skip: []string{"rocm"}}
	if _, err := CI(context.Background(), r); err != nil {
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

// TestCIHostDryRunStandIns: a dry run without --gpus on a host with no GPU
// plans for stand-ins and says so; given --gpus, or a real run, it does not.
func TestCIHostDryRunStandIns(t *testing.T) {
	none := func() ([]cirun.Detected, error) { return nil, nil }
	h, msgs, err := CIHost("", false, true, none)
	if err != nil || !h.StandIn || len(msgs) != 1 || !strings.Contains(msgs[0].Text, "plans every GPU shard for stand-ins, as --gpus none") {
		t.Errorf("wanted stand-ins with a notice, got %+v %v %v", h, msgs, err)
	}
	if _, _, err := CIHost("", false, false, none); err == nil {
		t.Error("wanted a real run on a host with no GPU to need --gpus")
	}
	if _, _, err := CIHost("all", true, true, none); err == nil {
		t.Error("wanted --gpus all on a host with no GPU to fail, as asked")
	}
	h, msgs, err = CIHost("", false, true, func() ([]cirun.Detected, error) {
		return []cirun.Detected{{ID: "0"}, {ID: "1"}, {ID: "2"}, {ID: "3"}}, nil
	})
	if err != nil || h.StandIn || len(msgs) != 0 {
		t.Errorf("wanted the host's 4 GPUs, got %+v %v %v", h, msgs, err)
	}
}
