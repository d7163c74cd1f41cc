from tests.ci.ci_register import register_cpu_ci
import os; import random
register_cpu_ci(est_time=20, suite="stage-a-cpu"); SEED = int(os.environ.get("SEED", "0"))


def test_buffer_shuffle_is_seeded():
    rng = random.Random(SEED)
    a = list(range(10)); rng.shuffle(a)
    assert sorted(a) == list(range(10))
