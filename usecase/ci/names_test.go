package ci

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/hostgpu"
	"github.com/radixark/miles-ci/usecase"
)

// TestCITyposFail: a mistyped stage, backend or event of ci is an
// UnknownError naming the nearest known name (usecase's TestTyposFail holds
// the other use cases to it).
func TestCITyposFail(t *testing.T) {
	const repo = "../../testdata/miles"
	ctx := context.Background()
	sched := CIRequest{Repo: repo, Event: "schedule", Schedule: "0 15 * * 0-5"}
	for _, tc := range []struct {
		name string
		req  CIRequest
		want string
	}{
		{"ci --only", func() CIRequest { r := sched; r.Only = []string{"stage-a-cpu", "stage-z"}; return r }(), `--only: unknown stage or backend "stage-z"; did you mean stage-a-cpu?`},
		{"ci --skip backend", func() CIRequest { r := sched; r.Skip = []string{"cdua"}; return r }(), `--skip: unknown stage or backend "cdua"; did you mean cuda?`},
		{"ci --event", CIRequest{Repo: repo, Event: "pull_rqeuest"}, `--event: unknown event "pull_rqeuest"; did you mean pull_request?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CI(ctx, tc.req)
			var unknown *usecase.UnknownError
			if !errors.As(err, &unknown) {
				t.Fatalf("wanted an UnknownError, got %v", err)
			}
			if got := err.Error(); !strings.HasPrefix(got, tc.want) || !strings.Contains(got, "(the known ones: ") {
				t.Errorf("wanted %q and the known ones, got %q", tc.want, got)
			}
		})
	}
	r := CIRequest{Repo: repo, Event: "schedule", Schedule: "0 15 * * 0-5", Only: []string{"cpu", "stage-c-2-gpu-h200"}, Skip: []string{"rocm"}}
	if _, err := CI(ctx, r); err != nil {
		t.Errorf("wanted the known names to pass, got %v", err)
	}
}

// TestCIHostDryRunStandIns: a dry run without --gpus on a host with no GPU
// plans for stand-ins and says so; given --gpus, or a real run, it does not
// (a usage error: the flag's value is what could not be used).
func TestCIHostDryRunStandIns(t *testing.T) {
	none := func() ([]hostgpu.Device, error) { return nil, nil }
	all := CIRequest{AllGPUs: true, Detect: none}
	h, msgs, err := oneHost(all)
	if err != nil || !h.StandIn || len(msgs) != 1 || !strings.Contains(msgs[0].Text, "plans every GPU shard for stand-ins, as --gpus none") {
		t.Errorf("wanted stand-ins with a notice, got %+v %v %v", h, msgs, err)
	}
	real := all
	real.Shards = passShards{}
	var usage *UsageError
	if _, _, err := oneHost(real); !errors.As(err, &usage) {
		t.Errorf("wanted a real run on a host with no GPU to need --gpus, got %v", err)
	}
	given := all
	given.GPUsGiven = true
	if _, _, err := oneHost(given); !errors.As(err, &usage) {
		t.Errorf("wanted --gpus all on a host with no GPU to fail, as asked, got %v", err)
	}
	four := all
	four.Detect = func() ([]hostgpu.Device, error) {
		return []hostgpu.Device{{ID: "0"}, {ID: "1"}, {ID: "2"}, {ID: "3"}}, nil
	}
	h, msgs, err = oneHost(four)
	if err != nil || h.StandIn || len(msgs) != 0 || len(h.Devices) != 4 {
		t.Errorf("wanted the host's 4 GPUs, got %+v %v %v", h, msgs, err)
	}
}
