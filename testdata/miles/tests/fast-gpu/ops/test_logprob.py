"""Log-prob kernels on both vendors."""

from tests.ci.ci_register import register_cuda_ci, register_rocm_ci

import torch

register_cuda_ci(est_time=200, suite="stage-b-2-gpu-h200", labels=["short", "precision"]); register_rocm_ci(est_time=200, suite="stage-c-4-gpu-mi350", labels=["amd", "precision"])


def test_logprob_matches_reference():
    logits = torch.randn(2, 8)
    assert torch.log_softmax(logits, -1).shape == (2, 8)
