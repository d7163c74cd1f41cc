from tests.ci.ci_register import register_cpu_ci
from miles.backends.megatron_utils import arguments

register_cpu_ci(est_time=1, suite="stage-a-cpu", nightly=True)


def test_megatron_argument_names():
    assert hasattr(arguments, "set_default_megatron_args")
