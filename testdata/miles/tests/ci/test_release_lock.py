from tests.ci.ci_register import register_cpu_ci
import json

register_cpu_ci(est_time=2.5, suite="stage-a-cpu")


def test_lock_has_commits():
    lock = {"sglang_commit": "0" * 40, "megatron_commit": "1" * 40}
    assert all(len(v) == 40 for v in lock.values())
