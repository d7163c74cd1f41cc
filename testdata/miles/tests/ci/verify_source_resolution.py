"""Checks that Miles, SGLang and Megatron-LM import from the checkouts CI set up.

miles-ci's own version of the check Miles' CI runs after syncing the
dependency sources: each module must resolve below the folder its
environment variable names, so a stale copy installed in site-packages
cannot shadow the ref under test.
"""
import os
import sys
from importlib.util import find_spec
from pathlib import Path

EXPECTED_ROOT = {
    "miles": "GITHUB_WORKSPACE",
    "sglang": "SGLANG_SOURCE_ROOT",
    "megatron.core": "MEGATRON_SOURCE_ROOT",
    "megatron.training": "MEGATRON_SOURCE_ROOT",
}


def main():
    bad = []
    for module, env in EXPECTED_ROOT.items():
        root = Path(os.environ[env]).resolve()
        spec = find_spec(module)
        if spec is None or spec.origin is None:
            bad.append(f"{module}: not importable (expected below ${env} = {root})")
            continue
        origin = Path(spec.origin).resolve()
        if not origin.is_relative_to(root):
            bad.append(f"{module}: resolved to {origin}, expected below ${env} = {root}")
            continue
        print(f"{module}: {origin}")
    if bad:
        sys.exit("source resolution failed:\n  " + "\n  ".join(bad))


if __name__ == "__main__":
    main()
