package cli

import (
	"fmt"
	"maps"

	"github.com/radixark/miles-ci/stagerun"
)

// cacheKey reads the cache registry's key for a run with --cache-registry
// REF: from the environment (MILES_CI_CACHE_KEY, a secret: never a flag),
// with the run's secrets to mask plus the key. Without one it says, once,
// that nothing is shared.
func cacheKey(env Env, registry string, secrets map[string]string) (*stagerun.CacheKey, map[string]string, error) {
	if registry == "" {
		return nil, secrets, nil
	}
	secret, ok := env.secret(stagerun.CacheKeyEnv)
	if !ok {
		warn(env, fmt.Sprintf("--cache-registry %s: %s is not set, so no layer pulled from it can be proven: every shard builds its dependency layers here and publishes none; give every trusted host the same secret in %s (docs/ci.md, layers shared across hosts)", registry, stagerun.CacheKeyEnv, stagerun.CacheKeyEnv))
		return nil, secrets, nil
	}
	key, err := stagerun.NewCacheKey(secret)
	if err != nil {
		return nil, nil, err
	}
	masked := maps.Clone(secrets)
	if masked == nil {
		masked = map[string]string{}
	}
	masked[stagerun.CacheKeyEnv] = secret
	return key, masked, nil
}
