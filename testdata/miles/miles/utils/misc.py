"""Small helpers."""

import importlib


def load_function(path):
    """Import "package.module.name" and return name."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)
