from tests.ci.ci_register import register_cpu_ci, register_cuda_ci

register_cuda_ci(est_time=300, suite="stage-c-4-gpu-b200", labels=["short"], hardware=["blackwell"], num_gpus=1)
