from tests.ci.ci_register import register_cpu_ci
import math

from miles.utils.mask_utils import get_response_lengths

register_cpu_ci(1.5, "stage-a-cpu")


def test_response_lengths():
    mask = [[0, 1, 1, 0]]
    assert get_response_lengths(mask) == [2]
    assert math.fsum(get_response_lengths([[1, 1], [0, 1]])) == 3
