"""Prints what the ROCm container holds: dependency commits, installs, the patch."""
from tests.ci.ci_register import register_rocm_ci
import importlib.util
import os
import subprocess

register_rocm_ci(est_time=10, suite="stage-c-4-gpu-mi350", labels=["amd"])


def git(path, *args):
    return subprocess.run(["git", "-C", path, *args], capture_output=True, text=True, check=True).stdout.strip()


if __name__ == "__main__":
    print("platform:", os.environ["MILES_HARDWARE_PLATFORM"])
    print("sglang head:", git("/sgl-workspace/sglang", "rev-parse", "HEAD"))
    print("megatron head:", git("/root/Megatron-LM", "rev-parse", "HEAD"))
    print("megatron diff:", git("/root/Megatron-LM", "diff", "--stat") or "none")
    for module in ("miles", "sglang", "megatron"):
        spec = importlib.util.find_spec(module)
        print(f"installed {module}:", spec.origin if spec else "no")
