package policy

import "slices"

// KnownLabels are the 19 domain labels of Miles CI, in the order rules §2 lists them.
var KnownLabels = []string{
	"megatron", "model-scripts", "sglang", "fsdp", "short", "long", "ckpt", "lora", "eval",
	"precision", "ft-short", "ft-long", "weight-update", "fully-async", "replay", "qwen35",
	"mooncake", "miles-plugin", "amd",
}

// IsKnownLabel reports whether l is one of KnownLabels.
func IsKnownLabel(l string) bool { return slices.Contains(KnownLabels, l) }

// sortedKnownLabels returns KnownLabels sorted by byte value.
func sortedKnownLabels() []string {
	s := slices.Clone(KnownLabels)
	slices.Sort(s)
	return s
}
