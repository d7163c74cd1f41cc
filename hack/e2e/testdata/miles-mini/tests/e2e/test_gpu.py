register_cuda_ci(est_time=30, suite="stage-c-2-gpu-h200", labels=["megatron"])


def test_gpu():
    pass
