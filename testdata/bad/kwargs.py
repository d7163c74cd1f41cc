opts = {"labels": ["megatron"]}
register_cuda_ci(300, "stage-c-2-gpu-h200", **opts)
