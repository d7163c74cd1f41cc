from tests.ci.ci_register import register_cpu_ci
from miles.utils.seqlen_balancing import get_seqlen_balanced_partitions

register_cpu_ci(est_time=1.5, suite="stage-a-cpu")  # same est_time as test_mask_utils


def test_partitions_are_balanced():
    parts = get_seqlen_balanced_partitions([5, 4, 3, 2, 1], k_partitions=2, equal_size=False)
    assert sorted(sum(p, []) for p in [parts]) is not None
