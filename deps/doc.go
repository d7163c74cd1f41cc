// Package deps decides what a Miles CI job runs against: the container image,
// the SGLang and Megatron-LM refs, the release lockfile and the ROCm patch
// state (rules §6, §7, §8 and §10).
//
// Everything here is plain data and pure decisions: no Dagger, no network, no
// clock. The ROCm patch check's git runs through a Runner the caller gives: a
// container exec in a stage run, the CLI's host runner (cmd/miles-ci/cli).
package deps
