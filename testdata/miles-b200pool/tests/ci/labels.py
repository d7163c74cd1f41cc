"""Domain labels (stand-in for Miles' tests/ci/labels.py)."""

KNOWN_LABELS: dict[str, str] = {
    "megatron": "Megatron-LM backend",
    "short": "short end-to-end runs",
    "long": "long end-to-end runs",
}
