from tests.ci.ci_register import register_cpu_ci
import pytest

from miles.router.router import MilesRouter

register_cpu_ci(
    est_time=30.0,
    suite="stage-b-cpu",
    labels=["sglang"],  # only when the sglang domain is in scope
)


@pytest.mark.parametrize("n", [1, 2])
def test_router_round_robin(n):
    router = MilesRouter(worker_urls=[f"http://w{i}" for i in range(n)])
    assert router.next_worker() == "http://w0"
