from tests.ci.ci_register import register_cpu_ci, register_cuda_ci

register_cuda_ci(est_time=3000, suite="stage-c-8-gpu-h200", labels=["long"], hardware=["hopper"])
