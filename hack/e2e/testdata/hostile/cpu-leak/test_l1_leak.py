from tests.ci.ci_register import register_cpu_ci
import os

register_cpu_ci(est_time=9, suite="stage-b-cpu")


def test_leaks_in_its_assert():
    assert not os.environ["HF_TOKEN"], "leak " + os.environ["HF_TOKEN"]
