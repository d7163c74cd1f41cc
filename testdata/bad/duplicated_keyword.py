register_cuda_ci(300, "stage-c-2-gpu-h200", labels=["megatron"], est_time=600)
