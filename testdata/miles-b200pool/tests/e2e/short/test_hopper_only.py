from tests.ci.ci_register import register_cpu_ci, register_cuda_ci

register_cuda_ci(est_time=200, suite="stage-b-2-gpu-h200", labels=["short"], hardware=["hopper"])
