"""Passes after printing 5,000 lines shaped like the runner's status lines."""
from tests.ci.ci_register import register_cuda_ci
register_cuda_ci(est_time=30, suite="stage-b-2-gpu-h200", labels=["short"])

if __name__ == "__main__":
    for i in range(1, 5001):
        print(f"[{i}/5000] case_{i}  PASS  elapsed=0s")
