from tests.ci.ci_register import register_cpu_ci
from miles.backends.fsdp_utils import checkpoint

register_cpu_ci(est_time=45, suite="stage-a-cpu", disabled="flaky on ubuntu-latest runners")


def test_checkpoint_paths():
    assert checkpoint.latest_path("/tmp/x") is None
