register_cuda_ci(-5, "stage-c-2-gpu-h200", labels=["megatron"])
