package ci

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/hostgpu"
	"github.com/radixark/miles-ci/internal/testfiles"
)

// TestCIRefusesModelsItCannotUse: a GPU model a person gives that no stage
// of the checkout, no runner of Miles and no --substitute names is an error
// with the nearest known one (h20 for h200), on a stand-in host too; a
// cross-vendor --substitute is refused naming both vendors; a model the
// checkout's own stages run on is known although miles-ci's tables lack
// it, and takes its vendor from its stage's backend; a detected host is
// what the machine has, and is not checked.
func TestCIRefusesModelsItCannotUse(t *testing.T) {
	repo := ciTree(t)
	wf := readTree(t, repo, ".github/workflows/pr-test.yml")
	testfiles.Write(t, repo, ".github/workflows/pr-test.yml", strings.Replace(wf, `runs_on: '["h100", "8gpu"]'`, `runs_on: '["x900", "8gpu"]'`, 1))
	const list = "the models its stages and Miles' runners use are b200, h100, h200, mi350, x900"
	host := func(s string) cirun.Host {
		h, err := cirun.ParseHost(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	sub := func(s string) []cirun.Substitute {
		x, err := cirun.ParseSubstitute(s)
		if err != nil {
			t.Fatal(err)
		}
		return []cirun.Substitute{x}
	}
	detected, err := cirun.ParseHost("all", func() ([]hostgpu.Device, error) {
		return []hostgpu.Device{{ID: "0", Model: "h20"}, {ID: "1", Model: "h20"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  CIRequest
		err  string
	}{
		{name: "a typo of h200", req: CIRequest{Host: host("h20:0-7")},
			err: "--gpus h20:0-7: h20 is not a GPU model of this run; did you mean h200? " + list + "; to run stages on h20 GPUs, give --substitute MODEL=h20"},
		{name: "on stand-ins too", req: CIRequest{Host: host("none:h200:0-3,h20:4-7")},
			err: "--gpus none:h200:0-3,h20:4-7: h20 is not a GPU model of this run; did you mean h200? " + list + "; to run stages on h20 GPUs, give --substitute MODEL=h20"},
		{name: "a fleet host", req: CIRequest{Hosts: []cirun.Host{{Name: "a", Devices: host("mi35:0-3").Devices, Models: host("mi35:0-3").Models}}},
			err: "--hosts: host a (gpus mi35:0-3): mi35 is not a GPU model of this run; did you mean mi350? " + list + "; to run stages on mi35 GPUs, give --substitute MODEL=mi35"},
		{name: "a substitute's first model", req: CIRequest{Host: host("h200:0-7"), Substitutes: sub("h10=h200")},
			err: "--substitute h10=h200: h10 is not a GPU model of this run; did you mean h100? " + list},
		{name: "across vendors", req: CIRequest{Host: host("h200:0-7"), Substitutes: sub("mi350=h200")},
			err: "--substitute mi350=h200: mi350 is an AMD GPU and h200 an NVIDIA one; a stage runs only on GPUs of its own vendor (its image and its visible-devices variable are that vendor's), so substitute a model of the same vendor"},
		{name: "the checkout's own model takes its stage's vendor", req: CIRequest{Host: host("mi350:0-7"), Substitutes: sub("x900=mi350")},
			err: "--substitute x900=mi350: x900 is an NVIDIA GPU and mi350 an AMD one; a stage runs only on GPUs of its own vendor (its image and its visible-devices variable are that vendor's), so substitute a model of the same vendor"},
		{name: "the checkout's own model", req: CIRequest{Host: host("x900:0-7,h200:8-15")}},
		{name: "a substitute's target is known", req: CIRequest{Host: host("a100:0-7"), Substitutes: sub("h100=a100")}},
		{name: "Miles' B200 on a checkout with no B200 stage", req: CIRequest{Host: host("h200:0-7,b200:8-15")}},
		{name: "a detected host is what the machine has", req: CIRequest{Host: detected}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Repo, tt.req.Event, tt.req.PRLabelsJSON = repo, "pull_request", "[]"
			_, err := CI(context.Background(), tt.req)
			var model *ModelError
			if tt.err == "" {
				if err != nil {
					t.Errorf("wanted the run, got %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.err || !errors.As(err, &model) {
				t.Errorf("wanted the ModelError %q, got %v", tt.err, err)
			}
		})
	}
}
