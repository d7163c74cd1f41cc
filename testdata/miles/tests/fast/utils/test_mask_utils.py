from tests.ci.ci_register import register_cpu_ci
import torch

from miles.utils.mask_utils import get_response_lengths

register_cpu_ci(1.5, "stage-a-cpu")


def test_response_lengths():
    mask = torch.tensor([[0, 1, 1, 0]])
    assert get_response_lengths(mask).tolist() == [2]
