package stagerun

// SecretNames are every secret a stage may read (rules §9, §10), in the
// order the front ends offer them.
var SecretNames = []string{SecretWandb, SecretNeon, SecretHF}

// HandedSecrets is the one place that decides which of the caller's secrets
// an engine session of a run holds: none for a pull request from a fork,
// otherwise each one lookup has (so the masker knows every value). For a
// fork lookup is not called, so no value is even read for a run that must not
// see it. Build's Spec.Secrets say which of the held ones a step reads; the
// front ends only pass the fork fact and their lookup.
func HandedSecrets[V any](fork bool, lookup func(name string) (V, bool)) map[string]V {
	held := map[string]V{}
	if fork {
		return held
	}
	for _, name := range SecretNames {
		if v, ok := lookup(name); ok {
			held[name] = v
		}
	}
	return held
}
