register_cuda_ci(est_time=60 * 10, suite="stage-c-2-gpu-h200", labels=["megatron"])
