"""Log-prob kernels on both vendors."""

from tests.ci.ci_register import register_cuda_ci, register_rocm_ci

import math

register_cuda_ci(est_time=200, suite="stage-b-2-gpu-h200", labels=["short", "precision"]); register_rocm_ci(est_time=200, suite="stage-c-4-gpu-mi350", labels=["amd", "precision"])


def test_logprob_matches_reference():
    logits = [0.5, -1.0, 2.0]
    total = math.log(sum(math.exp(x) for x in logits))
    assert math.isclose(sum(math.exp(x - total) for x in logits), 1.0)
