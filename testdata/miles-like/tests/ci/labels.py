"""CI domain labels: each key has a matching run-ci-<key> GitHub label."""

KNOWN_LABELS: dict[str, str] = {
    "megatron": "Megatron-LM training",
    "sglang": "SGLang rollout",
    "long": "long-running training",
    "ft-long": "fault-tolerance soak runs",
    "amd": "AMD MI350 ROCm stage",
}
