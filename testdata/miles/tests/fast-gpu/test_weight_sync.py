from tests.ci.ci_register import register_cuda_ci
import multiprocessing as dist

register_cuda_ci(
    # broadcast of a 0.5B model between two ranks
    est_time=90.5,
    suite=("stage-b-2-gpu-h200"),
    labels=[
        "weight-update",  # the update path
        "short",
    ],
)


def test_weight_sync_two_ranks():
    assert dist.cpu_count() >= 1
