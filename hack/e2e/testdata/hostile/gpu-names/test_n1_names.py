"""Leaves 100,000 files, one named after WANDB_API_KEY and one with HTML in its name, in /results; fails."""
import os
import sys

from tests.ci.ci_register import register_cuda_ci
register_cuda_ci(est_time=30, suite="stage-b-2-gpu-h200", labels=["short"])

if __name__ == "__main__":
    for i in range(100000):
        open(f"/results/f{i:06d}", "w").close()
    key = os.environ.get("WANDB_API_KEY", "")
    if key:
        with open("/results/" + key, "w") as f:
            f.write("named after the secret\n")
    # No '/' in the name: a file name cannot hold one, and the link must still be one.
    open("/results/<img src=x onerror=alert(1)> [click](javascript:alert(1))", "w").close()
    print("\n::add-mask::forged\x1b[2J\x1b]0;title\x07")
    sys.exit(1)
