package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// TestCICacheKey: --cache-registry takes its key from MILES_CI_CACHE_KEY
// into every shard's request; without one the run says once that nothing
// is shared; a short one is refused before the run.
func TestCICacheKey(t *testing.T) {
	fakeCIEngine(t, nil)
	run := ciShardRun
	var keyed, shards atomic.Int32
	ciShardRun = func(ctx context.Context, c stagerun.Container, req stagerun.Request, nonce string, m *report.Masker) (stagerun.Result, stagerun.Spec, error) {
		shards.Add(1)
		if req.CacheKey != nil && req.CacheRegistry == "127.0.0.1:5000/miles-ci/layers" {
			keyed.Add(1)
		}
		return run(ctx, c, req, nonce, m)
	}
	ci := func(vars map[string]string) (int, string) {
		code, _, stderr := runCLI(t, vars, "ci", "--repo", milesRepo(), "--event", "pull_request", "--gpus", "none", "--quiet", "--only", "cpu",
			"--cache-registry", "127.0.0.1:5000/miles-ci/layers", "--results", filepath.Join(t.TempDir(), "results"))
		return code, stderr
	}
	code, stderr := ci(nil)
	const unset = "--cache-registry 127.0.0.1:5000/miles-ci/layers: MILES_CI_CACHE_KEY is not set, so no layer pulled from it can be proven"
	if code != 0 || strings.Count(stderr, unset) != 1 || keyed.Load() != 0 || shards.Load() < 2 {
		t.Errorf("no key: wanted exit 0, %q once and no key in %d shards' requests, got %d (%d keyed)\n%s", unset, shards.Load(), code, keyed.Load(), stderr)
	}
	shards.Store(0)
	code, stderr = ci(map[string]string{"MILES_CI_CACHE_KEY": "0123456789abcdef0123456789abcdef"})
	if code != 0 || strings.Contains(stderr, unset) || keyed.Load() != shards.Load() || shards.Load() == 0 {
		t.Errorf("a key: wanted it in every shard's request (%d of %d), got exit %d\n%s", keyed.Load(), shards.Load(), code, stderr)
	}
	code, stderr = ci(map[string]string{"MILES_CI_CACHE_KEY": "too-short"})
	if code != 1 || !strings.Contains(stderr, "MILES_CI_CACHE_KEY is 9 characters, shorter than the 32 a cache registry key needs") || strings.Contains(stderr, "too-short") {
		t.Errorf("a short key: wanted it refused (exit 1) without its value, got %d\n%s", code, stderr)
	}
}

// TestRunCacheKey: run hands the key to the request, masks it in what it
// prints and keeps it out of the engine's secrets, and warns naming a tag
// whose image it did not trust.
func TestRunCacheKey(t *testing.T) {
	defer func(old func(context.Context, stagerun.Request, engine.Inputs, string, io.Writer, *report.Masker, func(string)) (stagerun.Result, error)) {
		engineRun = old
	}(engineRun)
	const secret = "0123456789abcdef0123456789abcdef"
	var got stagerun.Request
	var gotHost engine.Inputs
	engineRun = func(_ context.Context, req stagerun.Request, host engine.Inputs, _ string, _ io.Writer, m *report.Masker, _ func(string)) (stagerun.Result, error) {
		got, gotHost = req, host
		s := report.Summary{HW: policy.CPU, Suite: req.Stage.Name, Image: req.Image.Image, Verdict: report.Passed, Passed: true,
			Notes: []string{m.Mask("printed " + secret)}}
		return stagerun.Result{Summary: s, Layers: stagerun.Layers{Source: stagerun.LayersBuilt, Refused: "127.0.0.1:5000/miles-ci/layers:abc"}}, nil
	}
	code, stdout, stderr := runCLI(t, map[string]string{"MILES_CI_CACHE_KEY": secret}, "run", "--repo", milesRepo(), "--stage", "stage-b-cpu",
		"--gpus", "none", "--quiet", "--cache-registry", "127.0.0.1:5000/miles-ci/layers", "--results", filepath.Join(t.TempDir(), "results"))
	if code != 0 || got.CacheKey == nil || len(gotHost.Secrets) != 0 {
		t.Fatalf("wanted exit 0, the key in the request and not among the engine's secrets, got %d %v %v\n%s", code, got.CacheKey, gotHost.Secrets, stderr)
	}
	if !strings.Contains(stderr, "--cache-registry: 127.0.0.1:5000/miles-ci/layers:abc names an image that no proof binds to its content key, so it was not used") {
		t.Errorf("wanted a warning naming the refused tag, got\n%s", stderr)
	}
	if strings.Contains(stdout+stderr, secret) {
		t.Errorf("the key was printed:\n%s\n%s", stdout, stderr)
	}
}
