args = (300, "stage-c-2-gpu-h200")
register_cuda_ci(*args, labels=["megatron"])
