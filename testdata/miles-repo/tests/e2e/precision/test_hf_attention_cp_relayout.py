from tests.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=2000, suite="stage-c-4-gpu-h200", labels=["precision"])


def test_relayout():
    pass
