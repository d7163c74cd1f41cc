"""Prints the dependency commits a release run checked out."""
from tests.ci.ci_register import register_cuda_ci
import subprocess

register_cuda_ci(est_time=10, suite="stage-c-4-gpu-h200", labels=["megatron"])


def head(path):
    return subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


if __name__ == "__main__":
    print("sglang head:", head("/sgl-workspace/sglang"))
    print("megatron head:", head("/root/Megatron-LM"))
