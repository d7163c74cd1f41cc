// Package deps decides what a Miles CI job runs against: the container image,
// the SGLang and Megatron-LM refs, the release lockfile and the ROCm patch
// state (rules §6, §7, §8 and §10).
//
// Everything here is plain data and pure decisions: no Dagger, no network, no
// clock. The one place that touches the host is HostRunner, which runs git
// from an argv list for the ROCm patch check.
package deps
