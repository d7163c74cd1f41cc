package usecase

import (
	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/github"
)

// TriggerFacts are what triggered a run, as the caller gave them: the event,
// the PR's labels (PR_LABELS_JSON), and the pull request's body, number,
// head commit, fork and activity.
type TriggerFacts struct {
	Event        string
	PRLabelsJSON string
	PRBody       string
	PRNumber     int
	HeadSHA      string
	Fork         bool
	Action       string
}

// FromPR is the one rule for a pull request read with --pr: it fills each
// trigger fact the caller did not give itself (given), so a flag always wins
// and an environment default never does; a fork stays a fork, and a PR that
// is no longer open is closed unless an activity was given.
func (f TriggerFacts) FromPR(pr *github.PR, given Given) TriggerFacts {
	if pr == nil {
		return f
	}
	if !given.Event {
		f.Event = cirun.EventPullRequest
	}
	if !given.PRLabels {
		f.PRLabelsJSON = pr.LabelsJSON()
	}
	if !given.Body {
		f.PRBody = pr.Body
	}
	if !given.Number {
		f.PRNumber = pr.Number
	}
	if !given.HeadSHA {
		f.HeadSHA = pr.HeadSHA
	}
	f.Fork = f.Fork || pr.Fork
	if f.Action == "" && pr.State != "open" && pr.State != "" {
		f.Action = "closed"
	}
	return f
}
