package ci

import (
	"context"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// TestEngineShardsCountLayerPullsAndBuilds: every shard's request carries
// the run's --cache-registry, and the reuse line counts the layers pulled
// from it and built.
func TestEngineShardsCountLayerPullsAndBuilds(t *testing.T) {
	m, _ := report.NewMasker(nil)
	sources := []stagerun.LayerSource{stagerun.LayersBuilt, stagerun.LayersPulled, stagerun.LayersPulled}
	var registries []string
	e := &EngineShards{Container: func() stagerun.Container { return imageFake{} }, Masker: m, CacheRegistry: "127.0.0.1:5000/miles-ci/layers",
		Run: func(_ context.Context, _ stagerun.Container, req stagerun.Request, _ string, _ *report.Masker) (stagerun.Result, stagerun.Spec, error) {
			registries = append(registries, req.CacheRegistry)
			res := stagerun.Result{Summary: report.Summary{Verdict: report.Passed, Passed: true}, Layers: stagerun.Layers{Source: sources[len(registries)-1]}}
			return res, stagerun.Spec{Image: "radixark/miles:dev"}, nil
		}}
	for i := range sources {
		u := &cirun.Unit{Stage: &policy.Stage{Name: "stage-b-2-gpu-h200"}, Shard: i}
		if o := e.RunShard(context.Background(), stagerun.Request{}, u); o.Result != cirun.ResultSuccess {
			t.Fatalf("wanted shard %d to pass, got %+v", i, o)
		}
	}
	for _, r := range registries {
		if r != "127.0.0.1:5000/miles-ci/layers" {
			t.Errorf("wanted every shard's request to carry the cache registry, got %q", registries)
		}
	}
	res, err := e.Results(&cirun.Report{}, &cirun.Graph{})
	if err != nil {
		t.Fatal(err)
	}
	want := "dependency layers: 3 shard(s) prepared 1 distinct layer set(s); 2 reused one another's (same image and refs); through the cache registry, 2 pulled, 1 built"
	if res.Reuse != want {
		t.Errorf("wanted %q, got %q", want, res.Reuse)
	}
}
