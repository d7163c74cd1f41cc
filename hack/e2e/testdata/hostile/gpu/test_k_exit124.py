"""Exits 124 itself: an exit status, never a timeout."""
from tests.ci.ci_register import register_cuda_ci
register_cuda_ci(est_time=5, suite="stage-c-2-gpu-h200", labels=["short"])

if __name__ == "__main__":
    raise SystemExit(124)
