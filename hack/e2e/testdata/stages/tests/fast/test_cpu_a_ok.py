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
    token = os.environ.get("HF_TOKEN", "")
    print("hf token sha256:", hashlib.sha256(token.encode()).hexdigest())
    assert token
