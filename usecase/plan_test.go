package usecase

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

func TestCheckSource(t *testing.T) {
	miles := t.TempDir()
	if err := os.Mkdir(filepath.Join(miles, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckSource(miles); err != nil {
		t.Errorf("wanted a Miles checkout to pass, got %v", err)
	}
	want := "source has no tests/ folder: not a Miles checkout; pass --source the folder of a Miles checkout (the one that holds tests/)"
	if err := CheckSource(t.TempDir()); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}

// TestPlanAll checks plan --all through the use-case layer both front ends
// call: every shard of every stage in roster order, the PR's cadence and
// labels unless given (a given empty label list stays empty), and a notice for
// each stage the PR's diff skips.
func TestPlanAll(t *testing.T) {
	tables, err := policy.LoadTables(milesRepo)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, st := range tables.Stages() {
		want += max(st.ShardsFor(policy.Regular), 1)
	}
	ans, err := Plan(context.Background(), PlanRequest{Repo: milesRepo, All: true, Request: policy.PlanRequest{Cadence: policy.Regular}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.Plans) != want {
		t.Errorf("wanted %d plans (every shard of the roster), got %d", want, len(ans.Plans))
	}

	pr := fetch(t, 2874, true)
	ans, err = Plan(context.Background(), PlanRequest{Repo: milesRepo, All: true, PR: pr, Request: policy.PlanRequest{Cadence: policy.Regular}})
	if err != nil {
		t.Fatal(err)
	}
	if ans.PRPolicy == nil || ans.Selection == nil {
		t.Fatal("wanted the PR's policy and stage selection")
	}
	notices := 0
	for _, m := range ans.Messages {
		if m.Level == "notice" && strings.Contains(m.Text, "is skipped on "+pr.Ref()) {
			notices++
		}
	}
	if notices != len(ans.Selection.Skipped) {
		t.Errorf("wanted a notice for each of the %d skipped stages, got %d: %v", len(ans.Selection.Skipped), notices, ans.Messages)
	}
	reg, err := tables.LoadRegistry(milesRepo)
	if err != nil {
		t.Fatal(err)
	}
	include := func(labels []string) []string {
		p, err := policy.BuildPlan(reg, policy.PlanRequest{HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", Cadence: ans.PRPolicy.Cadence, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		return p.IncludeLabels
	}
	for _, p := range ans.Plans {
		if p.Suite == "stage-c-4-gpu-h200" && !slices.Equal(p.IncludeLabels, include(ans.PRPolicy.RawLabels)) {
			t.Fatalf("plan %s includes %v; wanted the PR's labels' %v", p.Suite, p.IncludeLabels, include(ans.PRPolicy.RawLabels))
		}
	}

	given, err := Plan(context.Background(), PlanRequest{Repo: milesRepo, PR: pr, Given: Given{Labels: true},
		Request: policy.PlanRequest{HW: policy.CUDA, Suite: "stage-c-4-gpu-h200", Cadence: policy.Regular, Labels: []string{}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(given.Plans) != 1 || !slices.Equal(given.Plans[0].IncludeLabels, include(nil)) {
		t.Errorf("a given empty label list must stay empty; the plan includes %v", given.Plans[0].IncludeLabels)
	}
}
