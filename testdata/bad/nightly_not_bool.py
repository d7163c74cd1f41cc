register_cuda_ci(est_time=300, suite="stage-c-2-gpu-h200", labels=["megatron"], nightly=1)
