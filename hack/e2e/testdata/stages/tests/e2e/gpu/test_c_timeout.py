"""Sleeps past its timeout (4 s with tests/ci/run_suite_defaults.json)."""
from tests.ci.ci_register import register_cuda_ci
import time

register_cuda_ci(est_time=2, suite="stage-b-2-gpu-h200", labels=["short"])

if __name__ == "__main__":
    time.sleep(120)
