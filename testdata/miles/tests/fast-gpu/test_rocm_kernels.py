from tests.ci.ci_register import register_rocm_ci
import torch

register_rocm_ci(est_time=150, suite="stage-c-4-gpu-mi350", labels=["amd", "short"])


def test_hip_is_visible():
    assert torch.version.hip is not None
