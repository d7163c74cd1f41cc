"""FSDP checkpoints."""

import os


def latest_path(folder):
    """The newest checkpoint folder under folder (iter_N), or None."""
    if not os.path.isdir(folder):
        return None
    steps = [d for d in os.listdir(folder) if d.startswith("iter_") and d[5:].isdigit()]
    return os.path.join(folder, max(steps, key=lambda d: int(d[5:]))) if steps else None
