from tests.ci.ci_register import register_cpu_ci
import importlib.util

register_cpu_ci(2.0, "stage-b-cpu", disabled="needs network access to resolve sglang")


def test_sglang_resolves_from_checkout():
    assert importlib.util.find_spec("sglang") is not None
