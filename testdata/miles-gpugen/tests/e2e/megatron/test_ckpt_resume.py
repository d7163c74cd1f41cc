from tests.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=1200, suite="stage-c-8-gpu-h200", labels=["ckpt", "ft-long"], hardware=["hopper"])
