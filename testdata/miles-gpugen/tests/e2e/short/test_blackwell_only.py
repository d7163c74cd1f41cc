from tests.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=400, suite="stage-c-8-gpu-b200", labels=["short"], hardware=["blackwell"])
