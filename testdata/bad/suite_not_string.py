register_cuda_ci(est_time=300, suite=2, labels=["megatron"])
