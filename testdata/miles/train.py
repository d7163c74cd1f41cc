"""miles-ci test tree: a stand-in for Miles' training entry point.

tests/e2e/utils.py runs `python train.py ARGS`; this prints what it was asked
to do and which dependency checkouts it would train with, then succeeds.
"""
import importlib.util
import sys


def origin(module):
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:  # its parent package is not there either
        spec = None
    return spec.origin if spec else "not found"


print("train.py (miles-ci stand-in):", " ".join(sys.argv[1:]))
for module in ("sglang", "megatron.core"):
    print(f"  {module}: {origin(module)}")
