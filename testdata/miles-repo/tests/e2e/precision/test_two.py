from tests.ci.ci_register import register_cpu_ci, register_cuda_ci

register_cpu_ci(est_time=30, suite="stage-b-cpu")
register_cuda_ci(est_time=300, suite="stage-b-2-gpu-h200", labels=["short"])
