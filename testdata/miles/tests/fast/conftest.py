import pytest


@pytest.fixture
def tiny_batch():
    return {"tokens": [[1, 2, 3]], "loss_mask": [[0, 1, 1]]}
