from tests.ci.ci_register import register_cuda_ci
import math

from miles.backends.kernels import fused_logsoftmax

register_cuda_ci(est_time=120, suite="stage-b-2-gpu-h200", labels=["short"])


def test_fused_logsoftmax():
    x = [[0.0, 1.0, 2.0], [3.0, 3.0, 3.0]]
    for row in fused_logsoftmax(x):
        assert math.isclose(sum(math.exp(v) for v in row), 1.0)
