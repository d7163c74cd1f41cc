from tests.ci.ci_register import register_cuda_ci
import math

from miles.backends.megatron_utils.cp_utils import slice_with_cp

register_cuda_ci(est_time=120, suite="stage-b-2-gpu-h200", labels=["megatron"])


def test_slice_with_cp():
    x = list(range(8))
    assert len(slice_with_cp(x, cp_rank=0, cp_size=1)) == 8
    assert math.prod(len(slice_with_cp(x, cp_rank=r, cp_size=2)) for r in range(2)) == 16


if __name__ == "__main__":
    register_cuda_ci(est_time=9999, suite="stage-c-8-gpu-h200", labels=["megatron"])
    test_slice_with_cp()
