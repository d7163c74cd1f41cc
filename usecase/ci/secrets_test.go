package ci

import (
	"testing"

	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/stagerun"
)

// TestCIForkGetsNoSecrets: a ci run of a fork's pull request (the flag, or
// the PR read) is a fork's event, and its session is handed no secret,
// without one being read (usecase's TestForkGetsNoSecrets holds the stage
// and file runs).
func TestCIForkGetsNoSecrets(t *testing.T) {
	pr, forkPR := &github.PR{Number: 1, State: "open"}, &github.PR{Number: 2, State: "open", Fork: true}
	for _, tt := range []struct {
		name string
		req  CIRequest
		fork bool
	}{
		{name: "ci, --fork", req: CIRequest{Event: "pull_request", Fork: true}, fork: true},
		{name: "ci, a fork's PR", req: CIRequest{PR: forkPR}, fork: true},
		{name: "ci, a same-repo PR", req: CIRequest{PR: pr}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.req.FromFork(); got != tt.fork {
				t.Fatalf("wanted FromFork %t, got %t", tt.fork, got)
			}
			if ev, err := ciEvent(tt.req); err != nil || ev.Fork != tt.fork {
				t.Errorf("wanted the event's fork %t, got %t (%v)", tt.fork, ev.Fork, err)
			}
			held := stagerun.HandedSecrets(tt.req.FromFork(), func(name string) (string, bool) {
				if tt.fork {
					t.Errorf("%s was read for a fork's run", name)
				}
				return "value-of-" + name, true
			})
			if (len(held) == 0) != tt.fork {
				t.Errorf("wanted secrets handed: %t, got %q", !tt.fork, held)
			}
		})
	}
}
