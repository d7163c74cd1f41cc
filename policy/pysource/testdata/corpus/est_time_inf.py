register_cuda_ci(est_time=1e400, suite='stage-c-2-gpu-h200', labels=['megatron'])
register_cuda_ci(est_time=1e-400, suite='stage-c-2-gpu-h200', labels=['megatron'])
