register_cuda_ci(est_time=300, labels=["megatron"])
