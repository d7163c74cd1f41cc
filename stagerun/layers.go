package stagerun

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
)

// Where a shard's prepared dependency layers (the base, requirements and
// deps phases) came from, with --cache-registry.
type LayerSource string

const (
	// LayersLocal: no cache registry was given; the engine's own cache
	// reuses the layers on this host only.
	LayersLocal LayerSource = ""
	// LayersPulled: another host published them; pulled by digest.
	LayersPulled LayerSource = "pulled"
	// LayersBuilt: built here (and published, unless the note says why not).
	LayersBuilt LayerSource = "built"
)

// Layers says how a shard's dependency layers were prepared.
type Layers struct {
	// Source is pulled or built ("" without a cache registry).
	Source LayerSource `json:"source,omitempty"`
	// Key is their content key (LayerKey), "" when they could not be shared.
	Key string `json:"key,omitempty"`
	// Ref is the registry reference with its digest they were pulled from or
	// published to ("" when not published).
	Ref string `json:"ref,omitempty"`
	// Refused is the cache registry tag whose image no proof binds to its
	// content key ("" when none was refused): built here instead.
	Refused string `json:"refused,omitempty"`
}

// CacheKeyEnv is the environment variable that holds the cache registry's
// key (CacheKey): a secret, never a flag.
const CacheKeyEnv = "MILES_CI_CACHE_KEY"

// CacheKey is the secret that proves a cache registry's layers: a run that
// holds it publishes, beside the layers' content-key tag, a proof tag whose
// name is an HMAC-SHA256 over the content key and the digest it published;
// a run pulls only an image whose proof tag, for the digest the content key
// names now, exists. Someone who can push to the registry but lacks the key
// can re-point a tag, never make its proof. It never leaves miles-ci (no
// container, argument or file holds it).
type CacheKey struct{ secret []byte }

// minCacheKey is the shortest key taken, in bytes.
const minCacheKey = 32

// NewCacheKey reads a key as given in CacheKeyEnv.
func NewCacheKey(secret string) (*CacheKey, error) {
	if len(secret) < minCacheKey {
		return nil, fmt.Errorf("%s is %d characters, shorter than the %d a cache registry key needs; give the same random secret on every trusted host, e.g. the output of openssl rand -hex 32", CacheKeyEnv, len(secret), minCacheKey)
	}
	return &CacheKey{secret: []byte(secret)}, nil
}

// String never shows the key.
func (*CacheKey) String() string { return "***" }

// GoString never shows the key.
func (*CacheKey) GoString() string { return "***" }

// proofTag is the tag that proves digest was published by a holder of the
// key under the content key: KEY-MAC, MAC the first 32 hex digits of the
// HMAC (128 bits), a valid registry tag.
func (k *CacheKey) proofTag(contentKey, digest string) string {
	mac := hmac.New(sha256.New, k.secret)
	fmt.Fprintf(mac, "%s\x00%s\x00%s", layerKeyVersion, contentKey, digest)
	return contentKey + "-" + hex.EncodeToString(mac.Sum(nil))[:32]
}

// layerKeyVersion changes when what LayerKey hashes changes, so a new
// miles-ci never pulls layers an older one keyed differently.
const layerKeyVersion = "miles-ci-layers/1"

// LayerKey is the content key of a spec's dependency layers: the base
// image by digest, the static environment and cache mounts, every step of
// the base, requirements and deps phases (their argv holds the scripts'
// text, so a new script version is a new key; the dependency checkouts are
// keyed by the resolved commits their argv names) and the digest of every
// checkout file those steps copy in (requirements.txt and the rest, by
// content). imageRef is the image as REPO@sha256:...; files maps each
// copied file's repo-relative path to its digest. 32 hex digits, a valid
// registry tag.
func LayerKey(spec Spec, image string, files map[string]string) string {
	type file struct{ Path, Digest string }
	var fs []file
	for _, p := range slices.Sorted(maps.Keys(files)) {
		fs = append(fs, file{p, files[p]})
	}
	data, _ := json.Marshal(struct {
		Version string
		Image   string
		Env     []EnvVar
		Caches  []Cache
		Steps   []Step
		Files   []file
	}{layerKeyVersion, image, spec.Env, spec.Caches, depSteps(spec), fs})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// depSteps are a spec's steps before its source phase: the layers a cache
// registry shares.
func depSteps(spec Spec) []Step {
	var out []Step
	for _, s := range spec.Steps {
		if s.Phase == PhaseSource || s.Phase == PhaseRun {
			break
		}
		out = append(out, s)
	}
	return out
}

// depFiles are the checkout files the dependency steps copy in, sorted.
func depFiles(spec Spec) []string {
	var out []string
	for _, s := range depSteps(spec) {
		for _, f := range s.Files {
			out = append(out, f.Path)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// cacheRegistry is a repository reference without tag or digest: an
// optional host[:port], then lowercase path components.
var cacheRegistry = lazyre.New(`^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?/)?[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$`)

// CheckCacheRegistry checks a --cache-registry value: a repository such as
// 127.0.0.1:5000/miles-ci/layers or registry.example.com/ci/miles-layers,
// without a tag or digest (each content key is a tag of it).
func CheckCacheRegistry(ref string) error {
	if len(ref) > 200 || !cacheRegistry.MatchString(ref) || !strings.Contains(ref, "/") {
		return fmt.Errorf("--cache-registry %q is not a repository; give one such as 127.0.0.1:5000/miles-ci/layers or registry.example.com/ci/miles-layers (no tag or digest: each content key is a tag)", ref)
	}
	return nil
}

// renderDeps adds the image, its static environment, the caches and the
// dependency steps to c: built here, or, with a cache registry and its key,
// pulled by digest when a holder of the key published the same content key
// (and published with its proof when built here). Without the key nothing
// pulled can be proven: the layers are built here and not published.
func renderDeps(ctx context.Context, c Container, spec Spec) (Container, []string, Layers, error) {
	if spec.CacheRegistry == "" {
		out, notes, err := buildDeps(ctx, c.From(spec.Image), spec)
		return out, notes, Layers{}, err
	}
	if spec.CacheKey == nil {
		out, notes, err := buildDeps(ctx, c.From(spec.Image), spec)
		return out, append(notes, fmt.Sprintf("dependency layers: built, not shared through %s: without %s no layer pulled from it can be proven, nor published", spec.CacheRegistry, CacheKeyEnv)), Layers{Source: LayersBuilt}, err
	}
	base := c.From(spec.Image)
	imageRef, err := base.ImageRef(ctx)
	if err != nil {
		// An image built from the checkout's Dockerfile (a PR image) has
		// no registry digest to key by: its layers stay on this host.
		out, notes, err := buildDeps(ctx, base, spec)
		return out, append(notes, fmt.Sprintf("dependency layers: built, not shared (the image %s has no registry digest to key them by)", spec.Image)), Layers{Source: LayersBuilt}, err
	}
	files := map[string]string{}
	for _, p := range depFiles(spec) {
		d, err := c.SourceFileDigest(ctx, p)
		if err != nil {
			return nil, nil, Layers{}, fmt.Errorf("reading %s of the checkout for the dependency layers' key: %w", p, err)
		}
		files[p] = d
	}
	// Keyed by the image's digest alone: an engine may name one image by
	// another reference it resolved first (docker.io/library/python:3.11,
	// python:3.11), and the key must not depend on an engine's history.
	key := LayerKey(spec, digestOf(imageRef), files)
	tag := spec.CacheRegistry + ":" + key
	var notes []string
	refused := ""
	if found, err := c.From(tag).ImageRef(ctx); err == nil {
		// The tag is only a hint of the digest: the image is used when the
		// proof of that digest under this key exists, and then pulled by
		// the digest (the engine may answer with another name for it), so
		// what was proven is what runs.
		digest := digestOf(found)
		proof := spec.CacheRegistry + ":" + spec.CacheKey.proofTag(key, digest)
		if _, err := c.From(proof).ImageRef(ctx); err == nil {
			ref := spec.CacheRegistry + "@" + digest
			out := c.From(ref)
			for _, e := range spec.Env {
				out = out.WithEnvVariable(e.Name, e.Value)
			}
			for _, m := range spec.Caches {
				out = out.WithMountedCache(m.Path, m.Key, m.Sharing)
			}
			return out, []string{fmt.Sprintf("dependency layers: pulled %s (key %s, proven by %s)", ref, key, proof)}, Layers{Source: LayersPulled, Key: key, Ref: ref}, nil
		}
		refused = tag
		notes = append(notes, fmt.Sprintf("dependency layers: %s names %s, which nothing proves a holder of %s published for its content (no tag %s); not used: built here instead", tag, digest, CacheKeyEnv, proof))
	}
	out, built, err := buildDeps(ctx, c.From(imageRef), spec)
	if err != nil {
		return nil, nil, Layers{}, err
	}
	notes = append(built, notes...)
	layers := Layers{Source: LayersBuilt, Key: key, Refused: refused}
	if spec.CachesWithheld != "" {
		return out, append(notes, fmt.Sprintf("dependency layers: built, not published to %s (%s)", spec.CacheRegistry, spec.CachesWithheld)), layers, nil
	}
	// The cache volumes are mounts, not layers: what is published is the
	// image and the dependency steps' own files.
	ref, err := out.Publish(ctx, tag)
	if err != nil {
		return out, append(notes, fmt.Sprintf("dependency layers: built; publishing them to %s failed, so other hosts build them too: %v", tag, err)), layers, nil
	}
	// Its proof names the digest pushed; the same image under the proof
	// tag costs the registry a manifest.
	proof := spec.CacheRegistry + ":" + spec.CacheKey.proofTag(key, digestOf(ref))
	if _, err := out.Publish(ctx, proof); err != nil {
		return out, append(notes, fmt.Sprintf("dependency layers: built and published %s, but publishing its proof %s failed, so other hosts build them too: %v", ref, proof, err)), layers, nil
	}
	layers.Ref = ref
	return out, append(notes, fmt.Sprintf("dependency layers: built and published %s (key %s, proven by %s)", ref, key, proof)), layers, nil
}

// digestOf is the digest of an image reference (REPO[:TAG]@sha256:...), or
// the reference itself when it names none.
func digestOf(ref string) string {
	if _, d, ok := strings.Cut(ref, "@"); ok {
		return d
	}
	return ref
}

// buildDeps adds the static environment, the caches and the dependency
// steps to c, a container started from the spec's image.
func buildDeps(ctx context.Context, c Container, spec Spec) (Container, []string, error) {
	for _, e := range spec.Env {
		c = c.WithEnvVariable(e.Name, e.Value)
	}
	for _, m := range spec.Caches {
		c = c.WithMountedCache(m.Path, m.Key, m.Sharing)
	}
	var notes []string
	for _, s := range depSteps(spec) {
		var err error
		var note string
		if c, note, err = applyStep(ctx, c, s); err != nil {
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	return c, notes, nil
}
