from tests.ci.ci_register import register_cpu_ci
from miles.utils import profile_utils

register_cpu_ci(est_time=4, suite="stage-b-cpu", disabled="")


def test_profiler_context():
    with profile_utils.maybe_profile(enabled=False):
        pass
