from tests.ci.ci_register import register_cpu_ci, register_cuda_ci

register_cuda_ci(est_time=900, suite="stage-c-4-gpu-h200", labels=["megatron"], hardware=["hopper", "blackwell"], num_gpus=2)
