package policy

// KnownLabels are the 19 built-in domain labels of Miles CI, in the order rules
// §2 lists them; a checkout's own are in its Tables.
var KnownLabels = []string{
	"megatron", "model-scripts", "sglang", "fsdp", "short", "long", "ckpt", "lora", "eval",
	"precision", "ft-short", "ft-long", "weight-update", "fully-async", "replay", "qwen35",
	"mooncake", "miles-plugin", "amd",
}
