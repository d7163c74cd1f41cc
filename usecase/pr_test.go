package usecase

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/github/githubtest"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/stagerun"
)

var (
	milesRepo   = filepath.Join("..", "testdata", "miles")
	apiFixtures = filepath.Join("..", "testdata", "github")
)

// fetch reads a recorded PR through github.Fetch, as both front ends do.
func fetch(t *testing.T, number int, files bool) *github.PR {
	t.Helper()
	s := githubtest.Start(apiFixtures)
	defer s.Close()
	pr, err := github.Fetch(context.Background(), github.Request{Number: number, Files: files, Options: github.Options{APIURL: s.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func shard(id int) *int { return &id }

// TestStageFromPR checks what a PR's facts decide in a stage run: cadence,
// labels, the body's directives, GITHUB_COMMIT_NAME, the fork flag, and the
// note when CI skips the stage on the PR; facts the caller gave win.
func TestStageFromPR(t *testing.T) {
	pr2874, fork := fetch(t, 2874, true), fetch(t, 2901, true)
	tests := []struct {
		name     string
		in       Inputs
		cadence  policy.Cadence
		labels   []string
		commit   string
		sglang   string
		secrets  []string
		withheld bool
		note     string
	}{
		{name: "the PR decides", in: Inputs{Stage: "stage-c-4-gpu-h200", Shard: shard(1), PR: pr2874},
			cadence: policy.Regular, labels: []string{"run-ci-megatron"}, commit: "5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d_2874",
			sglang: "#1234 (pr-body line 7)", secrets: []string{"WANDB_API_KEY", "NEON_DATABASE_URL"}},
		{name: "a stage CI skips on the PR", in: Inputs{Stage: "stage-c-8-gpu-h100", Shard: shard(1), PR: pr2874},
			cadence: policy.Regular, labels: []string{"run-ci-megatron"}, commit: "5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d_2874",
			sglang: "#1234 (pr-body line 7)", secrets: []string{"WANDB_API_KEY", "NEON_DATABASE_URL"},
			note: "CI skips stage-c-8-gpu-h100 on radixark/miles#2874 (rules §4: no enabled test of it is selected by cadence regular and labels [run-ci-megatron]); it runs here because it was asked for"},
		{name: "a fork PR gets no secrets whatever the caller says", in: Inputs{Stage: "stage-c-4-gpu-h200", Shard: shard(2), PR: fork, Given: Given{}},
			cadence: policy.Regular, labels: []string{}, commit: "8e2c4a6f0b1d3e5a7c9f1b3d5e7a9c0b2d4f6a81_2901",
			sglang: "sglang-miles (default)", withheld: true,
			note: "CI skips stage-c-4-gpu-h200 on radixark/miles#2901 (rules §4: no enabled test of it is selected by cadence regular and labels (none)); it runs here because it was asked for"},
		{name: "given facts win", in: Inputs{Stage: "stage-c-4-gpu-h200", Shard: shard(1), PR: pr2874,
			Cadence: "nightly", Labels: []string{}, PRBody: "", PRNumber: "7", HeadSHA: "abc",
			Given: Given{Body: true, Cadence: true, Labels: true, Number: true, HeadSHA: true}},
			cadence: policy.Nightly, labels: []string{}, commit: "abc_7",
			sglang: "sglang-miles (default)", secrets: []string{"WANDB_API_KEY", "NEON_DATABASE_URL"}},
		{name: "a CPU stage has no skip gate", in: Inputs{Stage: "stage-b-cpu", PR: fork},
			cadence: policy.Regular, labels: []string{}, commit: "8e2c4a6f0b1d3e5a7c9f1b3d5e7a9c0b2d4f6a81_2901",
			sglang: "sglang-miles (default)", withheld: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Repo = milesRepo
			req, err := Stage(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := stagerun.Build(req)
			if err != nil {
				t.Fatal(err)
			}
			if req.Plan.Cadence != tt.cadence || !slices.Equal(req.Labels, tt.labels) {
				t.Errorf("wanted cadence %s and labels %q, got %s and %q", tt.cadence, tt.labels, req.Plan.Cadence, req.Labels)
			}
			if got := runEnv(spec, "GITHUB_COMMIT_NAME"); got != tt.commit {
				t.Errorf("GITHUB_COMMIT_NAME: wanted %q, got %q", tt.commit, got)
			}
			if got := refText(req.Deps.SGLang); got != tt.sglang {
				t.Errorf("sglang: wanted %q, got %q", tt.sglang, got)
			}
			if !slices.Equal(spec.Secrets, tt.secrets) || (spec.SecretsWithheld != "") != tt.withheld {
				t.Errorf("wanted secrets %q (withheld %t), got %q (%q)", tt.secrets, tt.withheld, spec.Secrets, spec.SecretsWithheld)
			}
			if got := strings.Join(req.Notes, "\n"); got != tt.note {
				t.Errorf("notes: wanted %q, got %q", tt.note, got)
			}
		})
	}
}

func runEnv(spec stagerun.Spec, name string) string {
	for _, e := range spec.RunEnv {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func refText(r deps.Ref) string { return r.Ref + " (" + r.Origin() + ")" }

// TestFileFromPR checks a single-file run takes the PR's body (its
// ci-image-tag line), number and head, and no cadence or labels.
func TestFileFromPR(t *testing.T) {
	req, err := File(Inputs{Repo: milesRepo, File: "tests/e2e/sglang/test_sglang_weight_update.py", PR: fetch(t, 2950, false)})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := stagerun.Build(req)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Image != "radixark/miles:dev-202605011200" || spec.Cadence != "" || runEnv(spec, "GITHUB_COMMIT_NAME") != "3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a02_2950" {
		t.Errorf("wanted the body's image tag and the PR's commit name, got %s, cadence %q, %q", spec.Image, spec.Cadence, runEnv(spec, "GITHUB_COMMIT_NAME"))
	}
}

// TestPlansFromPR checks the stage's plans take cadence and labels from the PR.
func TestPlansFromPR(t *testing.T) {
	p, err := PlanStage(Inputs{Repo: milesRepo, Stage: "stage-c-4-gpu-h200", PR: fetch(t, 2874, false)})
	if err != nil {
		t.Fatal(err)
	}
	plans, err := p.Plans()
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 3 || !slices.Equal(plans[0].IncludeLabels, []string{"megatron"}) {
		t.Errorf("wanted 3 shards including label megatron, got %d, %q", len(plans), plans[0].IncludeLabels)
	}
}

func TestPRConflicts(t *testing.T) {
	pr := &github.PR{Repo: "radixark/miles", Number: 1, Labels: []string{}}
	lock := &deps.Lock{}
	tests := []struct {
		name string
		in   Inputs
		want string
	}{
		{"event", Inputs{Event: "schedule", Schedule: "0 15 * * 6"}, "--event conflicts with --pr: the pull request is the trigger (event pull_request with its labels); give one or the other"},
		{"schedule", Inputs{Schedule: "0 15 * * 6"}, "--schedule conflicts with --pr: the pull request is the trigger (event pull_request with its labels); give one or the other"},
		{"labels json", Inputs{PRLabelsJSON: "[]"}, "--pr-labels-json conflicts with --pr: the pull request is the trigger (event pull_request with its labels); give one or the other"},
		{"release", Inputs{Release: lock}, "a release run takes no pull request: its refs and image come from the lockfile; drop --pr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := CheckPR(tt.in); err == nil || err.Error() != tt.want {
				t.Errorf("CheckPR: wanted %q, got %v", tt.want, err)
			}
			tt.in.Repo, tt.in.Stage, tt.in.PR = milesRepo, "stage-b-cpu", pr
			if _, err := Stage(tt.in); err == nil || err.Error() != tt.want {
				t.Errorf("Stage: wanted %q, got %v", tt.want, err)
			}
		})
	}
}
