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
// the run's --cache-registry and its key, and the reuse line counts the
// layers pulled from it and built, and names a tag that was not trusted.
func TestEngineShardsCountLayerPullsAndBuilds(t *testing.T) {
	m, _ := report.NewMasker(nil)
	sources := []stagerun.LayerSource{stagerun.LayersBuilt, stagerun.LayersPulled, stagerun.LayersPulled}
	var registries []string
	key, err := stagerun.NewCacheKey("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	e := &EngineShards{Container: func() stagerun.Container { return imageFake{} }, Masker: m, CacheRegistry: "127.0.0.1:5000/miles-ci/layers", CacheKey: key,
		Run: func(_ context.Context, _ stagerun.Container, req stagerun.Request, _ string, _ *report.Masker) (stagerun.Result, stagerun.Spec, error) {
			if req.CacheKey != key {
				t.Errorf("wanted the run's cache key in every request, got %v", req.CacheKey)
			}
			registries = append(registries, req.CacheRegistry)
			layers := stagerun.Layers{Source: sources[len(registries)-1]}
			if layers.Source == stagerun.LayersBuilt {
				layers.Refused = "127.0.0.1:5000/miles-ci/layers:0123"
			}
			res := stagerun.Result{Summary: report.Summary{Verdict: report.Passed, Passed: true}, Layers: layers}
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
	want := "dependency layers: 3 shard(s) prepared 1 distinct layer set(s); 2 reused one another's (same image and refs); through the cache registry, 2 pulled, 1 built; not used, as no proof binds its image to its content key: 127.0.0.1:5000/miles-ci/layers:0123"
	if res.Reuse != want {
		t.Errorf("wanted %q, got %q", want, res.Reuse)
	}
}
