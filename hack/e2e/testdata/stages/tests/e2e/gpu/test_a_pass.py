"""Prints what the stage container gives a test, then passes."""
from tests.ci.ci_register import register_cuda_ci
import hashlib
import importlib.util
import os
import resource

register_cuda_ci(est_time=40, suite="stage-b-2-gpu-h200", labels=["short"])


def main():
    secret = os.environ.get("WANDB_API_KEY", "")
    print("secret value:", secret)  # the log must show *** instead
    print("secret sha256:", hashlib.sha256(secret.encode()).hexdigest())
    print("commit name:", os.environ["GITHUB_COMMIT_NAME"])
    for name in ("NOFILE", "MEMLOCK", "STACK"):
        print(f"limit {name.lower()}:", resource.getrlimit(getattr(resource, "RLIMIT_" + name)))
    shm = os.statvfs("/dev/shm")
    print("shm bytes:", shm.f_blocks * shm.f_frsize)
    for module in ("miles", "sglang", "megatron.core"):
        print(f"module {module}:", importlib.util.find_spec(module).origin)


if __name__ == "__main__":
    main()
