from tests.ci.ci_register import register_cuda_ci
import torch

from miles.backends.kernels import fused_logsoftmax

register_cuda_ci(est_time=120, suite="stage-b-2-gpu-h200", labels=["short"])


def test_fused_logsoftmax():
    x = torch.randn(4, 16, device="cuda")
    torch.testing.assert_close(fused_logsoftmax(x), torch.log_softmax(x, -1))
