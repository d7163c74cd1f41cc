package usecase

import (
	"testing"

	"github.com/radixark/miles-ci/github"
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
