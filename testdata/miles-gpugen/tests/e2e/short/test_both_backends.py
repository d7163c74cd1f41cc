from tests.ci.ci_register import register_cuda_ci, register_rocm_ci

register_cuda_ci(est_time=350, suite="stage-c-4-gpu-h200", labels=["sglang"], hardware=["hopper", "blackwell"])
register_rocm_ci(est_time=350, suite="stage-c-4-gpu-mi350", labels=["sglang"])
