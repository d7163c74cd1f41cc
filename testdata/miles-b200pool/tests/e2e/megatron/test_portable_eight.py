from tests.ci.ci_register import register_cpu_ci, register_cuda_ci

register_cuda_ci(est_time=1800.5, suite="stage-c-8-gpu-h200", labels=["megatron"], hardware=["hopper", "blackwell"])
