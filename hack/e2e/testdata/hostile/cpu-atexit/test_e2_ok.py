from tests.ci.ci_register import register_cpu_ci
register_cpu_ci(est_time=4, suite="stage-b-cpu")


def test_ok():
    assert True
