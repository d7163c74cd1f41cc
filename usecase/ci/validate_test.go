package ci

import (
	"context"
	"errors"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/whatif"
)

// TestCIRequestValidate: each combination of inputs that do not go
// together is refused with its message, as the CLI gives it (both front
// ends decode into the request: the module's with-pr on a release run or a
// scheduled event, its negative max-parallel), and the ones that do go
// together are taken.
func TestCIRequestValidate(t *testing.T) {
	const (
		history  = "--events and --as-of choose the runtime history a run orders its shards by and a what-if predicts with; a dry run reads none"
		whatIf   = "--what-if predicts a run and runs nothing: it goes with none of --dry-run, --mermaid, --rerun-failed and --record"
		oneHost  = "give --gpus (one host) or --hosts (a fleet), not both"
		prFacts  = "--pr is a pull_request's facts; drop --event, --schedule and --release-lock"
		parallel = "--max-parallel must be 0 (as many as fit) or more"
	)
	fleet := []cirun.Host{{Name: "a"}}
	for _, tt := range []struct {
		name string
		req  CIRequest
		want string
	}{
		{name: "a dry run with --events", req: CIRequest{DryRun: true, Given: usecase.Given{History: true}}, want: history},
		{name: "a dry run reading no history", req: CIRequest{DryRun: true}},
		{name: "a run with --events", req: CIRequest{Given: usecase.Given{History: true}}},
		{name: "a what-if with --events", req: CIRequest{WhatIf: true, Given: usecase.Given{History: true}}},
		{name: "a what-if and a dry run", req: CIRequest{WhatIf: true, DryRun: true}, want: whatIf},
		{name: "a what-if re-running", req: CIRequest{WhatIf: true, RerunFailed: "results"}, want: whatIf},
		{name: "a what-if recording", req: CIRequest{WhatIf: true, Given: usecase.Given{Record: true}}, want: whatIf},
		{name: "a what-if", req: CIRequest{WhatIf: true}},
		{name: "a run re-running and recording", req: CIRequest{RerunFailed: "results", Given: usecase.Given{Record: true}}},
		{name: "--gpus and --hosts before the file is read", req: CIRequest{GPUsGiven: true, Given: usecase.Given{Hosts: true}}, want: oneHost},
		{name: "--gpus and a fleet", req: CIRequest{GPUsGiven: true, Hosts: fleet}, want: oneHost},
		{name: "a fleet", req: CIRequest{Hosts: fleet, Given: usecase.Given{Hosts: true}}},
		{name: "one host", req: CIRequest{GPUsGiven: true}},
		{name: "--pr with --event schedule", req: CIRequest{Event: "schedule", Given: usecase.Given{PR: true, Event: true}}, want: prFacts},
		{name: "--pr with --schedule", req: CIRequest{Schedule: "0 15 * * 6", Given: usecase.Given{PR: true, Schedule: true}}, want: prFacts},
		{name: "--pr with --release-lock", req: CIRequest{Given: usecase.Given{PR: true, Release: true}}, want: prFacts},
		{name: "the module's with-pr on a release run", req: CIRequest{Event: cirun.EventRelease, Given: usecase.Given{PR: true, Event: true, Release: true}}, want: prFacts},
		{name: "--pr with --event pull_request", req: CIRequest{Event: "pull_request", Given: usecase.Given{PR: true, Event: true}}},
		{name: "--pr alone", req: CIRequest{Given: usecase.Given{PR: true}}},
		{name: "an environment's event and schedule under --pr", req: CIRequest{Event: "schedule", Schedule: "0 15 * * 6", Given: usecase.Given{PR: true}}},
		{name: "a scheduled run", req: CIRequest{Event: "schedule", Schedule: "0 15 * * 6", Given: usecase.Given{Event: true, Schedule: true}}},
		{name: "the module's negative max-parallel", req: CIRequest{MaxParallel: -1}, want: parallel},
		{name: "as many as fit", req: CIRequest{MaxParallel: 0}},
		{name: "at most 4", req: CIRequest{MaxParallel: 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("wanted it taken, got %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("wanted %q, got %v", tt.want, err)
			}
		})
	}
}

// TestCIRefusesFirst: CI checks the request before it reads anything (the
// runtime history, which a what-if reads first), and says a refusal is a
// usage error, so both front ends give it with their usage (the CLI's exit
// 2).
func TestCIRefusesFirst(t *testing.T) {
	read := false
	req := CIRequest{Repo: "/nonexistent", WhatIf: true, Given: usecase.Given{Record: true},
		ReadDurations: func(bool) (*whatif.Durations, error) { read = true; return nil, errors.New("read") }}
	_, err := CI(context.Background(), req)
	var usage *UsageError
	if !errors.As(err, &usage) || err.Error() != "--what-if predicts a run and runs nothing: it goes with none of --dry-run, --mermaid, --rerun-failed and --record" {
		t.Errorf("wanted the usage error of --what-if with --record, got %T %v", err, err)
	}
	if read {
		t.Error("wanted nothing read before the request was checked")
	}
}
