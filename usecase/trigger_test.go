package usecase

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/policy"
)

func TestTriggerFactsFromPR(t *testing.T) {
	pr := &github.PR{Number: 7, State: "closed", Body: "pr body", Labels: []string{"run-ci-megatron"}, HeadSHA: "abc", Fork: true}
	tests := []struct {
		name  string
		facts TriggerFacts
		given Given
		want  TriggerFacts
	}{
		{name: "the PR fills what was not given", want: TriggerFacts{Event: "pull_request", PRLabelsJSON: `["run-ci-megatron"]`, PRBody: "pr body", PRNumber: 7, HeadSHA: "abc", Fork: true, Action: "closed"}},
		{name: "an environment default is not given: the PR wins",
			facts: TriggerFacts{Event: "push", PRLabelsJSON: `["from-env"]`},
			want:  TriggerFacts{Event: "pull_request", PRLabelsJSON: `["run-ci-megatron"]`, PRBody: "pr body", PRNumber: 7, HeadSHA: "abc", Fork: true, Action: "closed"}},
		{name: "what the caller gave wins, even empty",
			facts: TriggerFacts{Event: "pull_request", PRLabelsJSON: `[]`, PRBody: "", PRNumber: 9, HeadSHA: "def", Action: "synchronize"},
			given: Given{Event: true, PRLabels: true, Body: true, Number: true, HeadSHA: true},
			want:  TriggerFacts{Event: "pull_request", PRLabelsJSON: `[]`, PRNumber: 9, HeadSHA: "def", Fork: true, Action: "synchronize"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.facts.FromPR(pr, tt.given); got != tt.want {
				t.Errorf("wanted %+v, got %+v", tt.want, got)
			}
		})
	}
	if got := (TriggerFacts{Event: "schedule"}).FromPR(nil, Given{}); got != (TriggerFacts{Event: "schedule"}) {
		t.Errorf("wanted no PR to change nothing, got %+v", got)
	}
}

// TestEveryCommandFillsFromPROneWay: plan's stage run, policy and ci read one
// pull request the same way: an environment's labels that were not given
// lose to the PR's, as the policy command has always done.
func TestEveryCommandFillsFromPROneWay(t *testing.T) {
	pr := &github.PR{Number: 7, State: "open", Labels: []string{"run-ci-megatron"}}
	repo := filepath.Join("..", "testdata", "miles")
	trig := PRTrigger(policy.Trigger{Event: "push", PRLabelsJSON: `["from-env"]`}, pr, Given{})
	ev, err := ciEvent(CIRequest{Repo: repo, Event: "push", PRLabelsJSON: `["from-env"]`, PR: pr, Host: cirun.Host{StandIn: true}})
	if err != nil {
		t.Fatal(err)
	}
	if trig.Event != ev.Name || trig.PRLabelsJSON != labelsJSON(ev.Labels) {
		t.Errorf("wanted policy and ci to read the PR alike, got %s %s and %s %v", trig.Event, trig.PRLabelsJSON, ev.Name, ev.Labels)
	}
	if _, err := CI(context.Background(), CIRequest{Repo: repo, PR: pr, Host: cirun.Host{StandIn: true}}); err != nil {
		t.Errorf("wanted a ci dry run of the PR, got %v", err)
	}
}
