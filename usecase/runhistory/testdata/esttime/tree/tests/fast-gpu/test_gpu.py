from tests.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=60, suite="stage-c-4-gpu-h200", labels=["megatron"])
