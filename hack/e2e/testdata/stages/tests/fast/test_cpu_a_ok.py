from tests.ci.ci_register import register_cpu_ci
import hashlib
import os

register_cpu_ci(est_time=5, suite="stage-b-cpu")


def test_checkouts_come_from_the_workspace():
    import megatron.core
    import sglang

    assert sglang.__file__.startswith(os.environ["GITHUB_WORKSPACE"] + "/sglang/")
    assert megatron.core.__file__.startswith(os.environ["GITHUB_WORKSPACE"] + "/Megatron-LM/")


def test_hf_token_arrives():
    # pytest keeps a passing test's output to itself, so the digest goes to the results folder
    # (miles-ci exports it as artifacts/hf-token.sha256).
    token = os.environ.get("HF_TOKEN", "")
    with open("/results/hf-token.sha256", "w") as f:
        f.write(hashlib.sha256(token.encode()).hexdigest() + "\n")
    assert token
