register_cuda_ci(suite="stage-c-2-gpu-h200", labels=["megatron"])
