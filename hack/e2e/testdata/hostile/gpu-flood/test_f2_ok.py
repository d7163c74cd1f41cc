"""Passes."""
from tests.ci.ci_register import register_cuda_ci
register_cuda_ci(est_time=20, suite="stage-b-2-gpu-h200", labels=["short"])

if __name__ == "__main__":
    print("test_f2_ok: ran")
