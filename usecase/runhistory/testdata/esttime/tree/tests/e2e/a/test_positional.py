from tests.ci.ci_register import register_cuda_ci

register_cuda_ci((70.0), "stage-c-8-gpu-h200", labels=["megatron"])  # est 70


def test_x():
    assert "est_time=70"
