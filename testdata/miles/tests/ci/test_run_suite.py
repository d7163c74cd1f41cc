from tests.ci.ci_register import register_cpu_ci
import ast
import textwrap
import types

register_cpu_ci(est_time=10, suite="stage-b-cpu")

_calls = types.SimpleNamespace(register_cpu_ci=lambda **kw: kw)
_calls.register_cpu_ci(est_time=999, suite="stage-b-cpu")

FIXTURE = textwrap.dedent(
    """
    register_cuda_ci(est_time=60, suite="stage-c-2-gpu-h200", labels=["megatron"])
    """
)


def test_fixture_parses():
    tree = ast.parse(FIXTURE)
    assert isinstance(tree.body[0], ast.Expr)


def test_nested_call_is_ignored():
    register_cpu_ci = lambda **kw: kw  # noqa: E731
    assert register_cpu_ci(est_time=1, suite="stage-a-cpu")["suite"] == "stage-a-cpu"
