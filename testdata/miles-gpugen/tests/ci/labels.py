"""Domain labels (stand-in for Miles' tests/ci/labels.py)."""

KNOWN_LABELS = {
    "megatron": "Megatron-LM backend",
    "sglang": "SGLang rollout",
    "short": "short end-to-end runs",
    "long": "long end-to-end runs",
    "ckpt": "checkpointing",
    "weight-update": "weight updates",
    "ft-short": "fault tolerance, short",
    "ft-long": "fault tolerance, long",
}
