"""Domain labels of the CI registry (a stand-in for Miles' tests/ci/labels.py).

A test names its domains in register_*_ci(..., labels=[...]); a pull request
selects them with the matching run-ci-<label> GitHub label.
"""

KNOWN_LABELS: dict[str, str] = {
    "megatron": "Megatron-LM training",
    "model-scripts": "model launch scripts",
    "sglang": "SGLang rollout",
    "fsdp": "FSDP training",
    "short": "short multi-GPU smoke runs",
    "long": "long training runs",
    "ckpt": "checkpoint save and load",
    "lora": "LoRA training",
    "eval": "evaluation",
    "precision": "numerical precision",
    "ft-short": "fault tolerance, short",
    "ft-long": "fault tolerance, long",
    "weight-update": "weight updates",
    "fully-async": "fully asynchronous rollout",
    "replay": "routing replay",
    "qwen35": "Qwen3.5 models",
    "mooncake": "Mooncake transfer",
    "miles-plugin": "miles plugins",
    "amd": "AMD ROCm stage",
}
