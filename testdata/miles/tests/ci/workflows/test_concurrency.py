from tests.ci.ci_register import register_cpu_ci
import re

register_cpu_ci(est_time=0, suite="stage-b-cpu")


def test_group_name():
    assert re.fullmatch(r"pr-test-\d+", "pr-test-42")
