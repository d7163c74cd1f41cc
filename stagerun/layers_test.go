package stagerun_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	. "github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

const cacheRepo = "127.0.0.1:5000/miles-ci/layers"

// trustedKey is the cache registry key of the tests' trusted hosts.
var trustedKey = cacheKey("0123456789abcdef0123456789abcdef-trusted")

func cacheKey(secret string) *CacheKey {
	k, err := NewCacheKey(secret)
	if err != nil {
		panic(err)
	}
	return k
}

// sharedSpec is a resolved CUDA stage spec with a cache registry and the
// trusted hosts' key.
func sharedSpec(t *testing.T, in usecase.Inputs) Spec {
	t.Helper()
	req := stageRequest(t, in)
	req.Commits = Commits{SGLang: sglangHead, Megatron: megatronHead}
	req.CacheRegistry, req.CacheKey = cacheRepo, trustedKey
	return build(t, req)
}

// proofOf is the proof tag a layer set's note names.
func proofOf(t *testing.T, notes []string) string {
	t.Helper()
	for _, n := range notes {
		if _, proof, ok := strings.Cut(n, ", proven by "); ok {
			return strings.TrimSuffix(proof, ")")
		}
	}
	t.Fatalf("no proof in the notes %q", notes)
	return ""
}

func TestLayerKey(t *testing.T) {
	spec := sharedSpec(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200"})
	files := map[string]string{"requirements.txt": "sha256:aaa"}
	key := LayerKey(spec, "radixark/miles:dev@sha256:base", files)
	if len(key) != 32 || strings.Trim(key, "0123456789abcdef") != "" {
		t.Fatalf("wanted 32 hex digits, got %q", key)
	}
	same := func(name string, s Spec, image string, f map[string]string, want bool) {
		t.Helper()
		if got := LayerKey(s, image, f) == key; got != want {
			t.Errorf("%s: wanted the same key %v, got %v", name, want, got)
		}
	}
	same("the same inputs", spec, "radixark/miles:dev@sha256:base", map[string]string{"requirements.txt": "sha256:aaa"}, true)
	same("another image digest", spec, "radixark/miles:dev@sha256:next", files, false)
	same("another requirements.txt", spec, "radixark/miles:dev@sha256:base", map[string]string{"requirements.txt": "sha256:bbb"}, false)

	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200"})
	req.Commits = Commits{SGLang: strings.Repeat("4", 40), Megatron: megatronHead}
	req.CacheRegistry = cacheRepo
	same("another SGLang commit", build(t, req), "radixark/miles:dev@sha256:base", files, false)

	// What comes after the dependency layers is no input of theirs: another
	// shard, other labels, other run facts.
	other := sharedSpec(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Labels: []string{"run-ci-short"}, Models: true})
	same("other labels and data", other, "radixark/miles:dev@sha256:base", files, true)
	edited := spec
	edited.Steps = slices.Clone(spec.Steps)
	for i, s := range edited.Steps {
		if s.Phase == PhaseSource && s.Kind == KindExec {
			edited.Steps[i].Argv = []string{"python", "other.py"}
		}
	}
	same("another source step", edited, "radixark/miles:dev@sha256:base", files, true)
	for i, s := range edited.Steps {
		if s.Phase == PhaseDeps && s.Kind == KindExec {
			edited.Steps[i].Argv = append(slices.Clone(s.Argv), "--changed")
			break
		}
	}
	same("another deps step (a new script version)", edited, "radixark/miles:dev@sha256:base", files, false)
}

func TestCheckCacheRegistry(t *testing.T) {
	for _, ok := range []string{cacheRepo, "registry.example.com/ci/miles-layers", "localhost:5000/layers", "ghcr.io/radixark/miles-ci-layers"} {
		if err := CheckCacheRegistry(ok); err != nil {
			t.Errorf("%s: wanted no error, got %v", ok, err)
		}
	}
	for _, bad := range []string{"", "layers", cacheRepo + ":tag", cacheRepo + "@sha256:abc", "Registry.example.com/UPPER", "reg.example.com/a b", "-x/y", "a//b"} {
		want := `--cache-registry "` + bad + `" is not a repository; give one such as 127.0.0.1:5000/miles-ci/layers or registry.example.com/ci/miles-layers (no tag or digest: each content key is a tag)`
		if err := CheckCacheRegistry(bad); err == nil || err.Error() != want {
			t.Errorf("wanted %q, got %v", want, err)
		}
	}
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200"})
	req.CacheRegistry = "x:y"
	if _, err := Build(req); err == nil || !strings.HasPrefix(err.Error(), `--cache-registry "x:y" is not a repository`) {
		t.Errorf("wanted Build to refuse a bad --cache-registry, got %v", err)
	}
}

// hasOp says whether a container's ops hold one that starts with prefix.
func hasOp(c Container, prefix string) bool {
	return slices.ContainsFunc(c.(*fake).ops, func(op string) bool { return strings.HasPrefix(op, prefix) })
}

// firstHost renders spec on a host of its own with an empty cache
// registry: it builds the layers and publishes them.
func firstHost(t *testing.T, spec Spec) (*fake, Prepared) {
	t.Helper()
	host := newFake((&engine{}).handle)
	host.eng.cacheRepo = cacheRepo
	p, err := Render(context.Background(), host, spec)
	if err != nil {
		t.Fatal(err)
	}
	return host, p
}

// TestRenderSharesLayers renders one shard on two hosts that share a cache
// registry: the first builds the dependency layers and publishes them, the
// second pulls them by digest and runs none of their steps; a changed
// requirements.txt is a new key, built again.
func TestRenderSharesLayers(t *testing.T) {
	ctx := context.Background()
	spec := sharedSpec(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200"})
	hostA, a := firstHost(t, spec)
	key := a.Layers.Key
	want := Layers{Source: LayersBuilt, Key: key, Ref: cacheRepo + ":" + key + "@sha256:1"}
	proof := proofOf(t, a.Notes)
	if a.Layers != want || !slices.Equal(hostA.eng.published, []string{cacheRepo + ":" + key, proof}) {
		t.Fatalf("wanted %+v and two pushes (the layers, their proof), got %+v and %v", want, a.Layers, hostA.eng.published)
	}
	if mac, ok := strings.CutPrefix(proof, cacheRepo+":"+key+"-"); !ok || len(mac) != 32 || strings.Trim(mac, "0123456789abcdef") != "" {
		t.Errorf("wanted the proof tag KEY-<32 hex digits>, got %s", proof)
	}
	if !hasOp(a.Container, "from radixark/miles:dev@sha256:base") || !hasOp(a.Container, "exec <reconcile>") {
		t.Errorf("wanted host A to build from the image's digest, got %v", a.Container.(*fake).ops)
	}
	if !slices.Contains(a.Notes, "dependency layers: built and published "+want.Ref+" (key "+key+", proven by "+proof+")") {
		t.Errorf("wanted a note of the push, got %q", a.Notes)
	}

	hostB := newFake((&engine{}).handle)
	hostB.eng.cacheRepo, hostB.eng.registry = cacheRepo, hostA.eng.registry
	b, err := Render(ctx, hostB, spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Layers{Source: LayersPulled, Key: key, Ref: cacheRepo + "@sha256:1"}); b.Layers != want {
		t.Errorf("wanted %+v, got %+v", want, b.Layers)
	}
	if !slices.Contains(b.Notes, "dependency layers: pulled "+cacheRepo+"@sha256:1 (key "+key+", proven by "+proof+")") {
		t.Errorf("wanted a note of the proven pull, got %q", b.Notes)
	}
	ops := b.Container.(*fake).ops
	if !hasOp(b.Container, "from "+cacheRepo+"@sha256:1") || hasOp(b.Container, "exec <reconcile>") || hasOp(b.Container, "exec git fetch") {
		t.Errorf("wanted host B to start from the pushed digest and run no dependency step, got\n%s", strings.Join(ops, "\n"))
	}
	for _, op := range []string{"env CI=true", "cache miles-ci:pip /root/.cache/pip SHARED", "source /__w/miles/miles", "exec python tests/ci/verify_source_resolution.py", "secret WANDB_API_KEY"} {
		if !hasOp(b.Container, op) {
			t.Errorf("wanted %q on host B, got\n%s", op, strings.Join(ops, "\n"))
		}
	}
	if len(hostB.eng.published) != 0 {
		t.Errorf("wanted host B to push nothing, got %v", hostB.eng.published)
	}

	hostC := newFake((&engine{}).handle)
	hostC.eng.cacheRepo, hostC.eng.registry = cacheRepo, hostA.eng.registry
	hostC.eng.sources = map[string]string{"requirements.txt": "edited"}
	c, err := Render(ctx, hostC, spec)
	if err != nil {
		t.Fatal(err)
	}
	if c.Layers.Source != LayersBuilt || c.Layers.Key == key {
		t.Errorf("wanted a new key built for an edited requirements.txt, got %+v", c.Layers)
	}
}

// TestRenderRefusesUnprovenLayers: the content-key tag re-pointed to
// another image (someone who can push but holds no key), or layers that a
// host with another key published, are not used: the trusted host builds
// them, says which tag it refused, and publishes its own with their proof.
func TestRenderRefusesUnprovenLayers(t *testing.T) {
	ctx := context.Background()
	spec := sharedSpec(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200"})
	hostA, a := firstHost(t, spec)
	tag := cacheRepo + ":" + a.Layers.Key

	repointed := map[string]string{}
	for k, v := range hostA.eng.registry {
		repointed[k] = v
	}
	repointed[tag] = tag + "@sha256:planted"
	other := sharedSpec(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200"})
	other.CacheKey = cacheKey("another key of at least thirty-two characters")
	for _, c := range []struct {
		name     string
		spec     Spec
		registry map[string]string
	}{
		{"the content-key tag re-pointed to a planted image", spec, repointed},
		{"layers another key proved", other, hostA.eng.registry},
	} {
		host := newFake((&engine{}).handle)
		host.eng.cacheRepo, host.eng.registry = cacheRepo, maps.Clone(c.registry)
		p, err := Render(ctx, host, c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if p.Layers.Source != LayersBuilt || p.Layers.Refused != tag {
			t.Errorf("%s: wanted the layers built and %s refused, got %+v", c.name, tag, p.Layers)
		}
		if hasOp(p.Container, "from "+cacheRepo+"@") || !hasOp(p.Container, "exec <reconcile>") {
			t.Errorf("%s: wanted nothing pulled and the dependency steps run, got\n%s", c.name, strings.Join(p.Container.(*fake).ops, "\n"))
		}
		if !slices.ContainsFunc(p.Notes, func(n string) bool {
			return strings.HasPrefix(n, "dependency layers: "+tag+" names ") && strings.Contains(n, "not used: built here instead")
		}) {
			t.Errorf("%s: wanted a note naming the refused tag, got %q", c.name, p.Notes)
		}
		if len(host.eng.published) != 2 || host.eng.published[0] != tag {
			t.Errorf("%s: wanted the rebuilt layers published with their proof, got %v", c.name, host.eng.published)
		}
	}
}

// TestRenderWithoutCacheKey: with a cache registry but no key, nothing
// pulled can be proven: a published layer set is not used, the layers are
// built and nothing is published.
func TestRenderWithoutCacheKey(t *testing.T) {
	ctx := context.Background()
	spec := sharedSpec(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200"})
	hostA, _ := firstHost(t, spec)
	spec.CacheKey = nil
	host := newFake((&engine{}).handle)
	host.eng.cacheRepo, host.eng.registry = cacheRepo, hostA.eng.registry
	p, err := Render(ctx, host, spec)
	if err != nil {
		t.Fatal(err)
	}
	want := "dependency layers: built, not shared through " + cacheRepo + ": without MILES_CI_CACHE_KEY no layer pulled from it can be proven, nor published"
	if p.Layers != (Layers{Source: LayersBuilt}) || len(host.eng.published) != 0 || hasOp(p.Container, "from "+cacheRepo) || !slices.Contains(p.Notes, want) {
		t.Errorf("wanted the layers built, nothing pulled or published and %q, got %+v %v %q", want, p.Layers, host.eng.published, p.Notes)
	}
}

func TestNewCacheKey(t *testing.T) {
	if _, err := NewCacheKey("short"); err == nil || err.Error() != "MILES_CI_CACHE_KEY is 5 characters, shorter than the 32 a cache registry key needs; give the same random secret on every trusted host, e.g. the output of openssl rand -hex 32" {
		t.Errorf("wanted a short key refused, got %v", err)
	}
	secret := "0123456789abcdef0123456789abcdef-trusted"
	k := cacheKey(secret)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k), fmt.Sprintf("%+v", Spec{CacheKey: k})} {
		if strings.Contains(s, secret) || strings.Contains(s, "0123456789") {
			t.Errorf("the key shows in %q", s)
		}
	}
}

// TestRenderSharesNoForkLayers: a fork's layers may be pulled but are never
// published, as a fork mounts no cache volume.
func TestRenderSharesNoForkLayers(t *testing.T) {
	spec := sharedSpec(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200", Fork: true})
	host := newFake((&engine{}).handle)
	host.eng.cacheRepo = cacheRepo
	p, err := Render(context.Background(), host, spec)
	if err != nil {
		t.Fatal(err)
	}
	if p.Layers.Source != LayersBuilt || p.Layers.Ref != "" || len(host.eng.published) != 0 {
		t.Errorf("wanted a fork's layers built and not published, got %+v and %v", p.Layers, host.eng.published)
	}
	want := "dependency layers: built, not published to " + cacheRepo + " (" + spec.CachesWithheld + ")"
	if !slices.Contains(p.Notes, want) {
		t.Errorf("wanted %q, got %q", want, p.Notes)
	}
}

// TestRenderWithoutRegistry keeps today's chain: no lookup, no key.
func TestRenderWithoutRegistry(t *testing.T) {
	req := stageRequest(t, usecase.Inputs{Stage: "stage-b-2-gpu-h200"})
	req.Commits = Commits{SGLang: sglangHead, Megatron: megatronHead}
	p, err := Render(context.Background(), newFake((&engine{}).handle), build(t, req))
	if err != nil {
		t.Fatal(err)
	}
	if p.Layers != (Layers{}) || !hasOp(p.Container, "from radixark/miles:dev") || hasOp(p.Container, "from radixark/miles:dev@") {
		t.Errorf("wanted the image by its name and no layer sharing, got %+v %v", p.Layers, p.Container.(*fake).ops[:2])
	}
}
