package usecase

import (
	"slices"
	"testing"

	"github.com/radixark/miles-ci/stagerun"
)

// TestForkGetsNoSecrets holds "a fork gets no secrets" to its one place:
// every way a front end says fork (the flag, the PR read; the ci event in
// usecase/ci's TestCIForkGetsNoSecrets) gives
// a request whose spec reads no secret and whose session is handed none, with
// every secret on offer and without reading one. (TestFrontEndsWithholdNoSecret
// in internal/layering holds the front ends to only passing the fact.)
func TestForkGetsNoSecrets(t *testing.T) {
	pr, forkPR := fetch(t, 2874, true), fetch(t, 2901, true)
	stage := func(in Inputs) func(*testing.T) stagerun.Request {
		return func(t *testing.T) stagerun.Request {
			in.Repo = milesRepo
			req, err := Stage(in)
			if err != nil {
				t.Fatal(err)
			}
			return req
		}
	}
	file := func(in Inputs) func(*testing.T) stagerun.Request {
		return func(t *testing.T) stagerun.Request {
			in.Repo, in.File = milesRepo, "tests/e2e/megatron/test_glm4_9b.py"
			req, err := File(in)
			if err != nil {
				t.Fatal(err)
			}
			return req
		}
	}
	tests := []struct {
		name    string
		request func(*testing.T) stagerun.Request
		fork    bool
		secrets []string // the spec's; every run is handed all three otherwise
	}{
		{name: "stage run, --fork", request: stage(Inputs{Stage: "stage-c-4-gpu-h200", Shard: shard(1), Fork: true}), fork: true},
		{name: "stage run, a fork's PR", request: stage(Inputs{Stage: "stage-c-4-gpu-h200", Shard: shard(1), PR: forkPR}), fork: true},
		{name: "file run, --fork", request: file(Inputs{Fork: true}), fork: true},
		{name: "file run, a fork's PR", request: file(Inputs{PR: forkPR}), fork: true},
		{name: "stage run, a same-repo PR", request: stage(Inputs{Stage: "stage-c-4-gpu-h200", Shard: shard(1), PR: pr}),
			secrets: []string{stagerun.SecretWandb, stagerun.SecretNeon}},
		{name: "CPU stage run", request: stage(Inputs{Stage: "stage-b-cpu"}), secrets: []string{stagerun.SecretHF}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.request(t)
			if req.Fork != tt.fork {
				t.Fatalf("wanted fork %t, got %t", tt.fork, req.Fork)
			}
			spec, err := stagerun.Build(req)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(spec.Secrets, tt.secrets) || (spec.SecretsWithheld != "") != tt.fork {
				t.Errorf("wanted the spec's secrets %q (withheld %t), got %q (%q)", tt.secrets, tt.fork, spec.Secrets, spec.SecretsWithheld)
			}
			held := handed(t, req.Fork)
			if want := map[bool]int{true: 0, false: 3}[tt.fork]; len(held) != want {
				t.Errorf("wanted %d secrets handed to the session, got %q", want, held)
			}
		})
	}
}

// handed is what stagerun.HandedSecrets gives a session when the caller has
// every secret; for a fork no value may even be looked up.
func handed(t *testing.T, fork bool) map[string]string {
	t.Helper()
	return stagerun.HandedSecrets(fork, func(name string) (string, bool) {
		if fork {
			t.Errorf("%s was read for a fork's run", name)
		}
		return "value-of-" + name, true
	})
}
