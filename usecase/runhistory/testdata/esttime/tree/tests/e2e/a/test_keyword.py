from tests.ci.ci_register import register_cuda_ci, register_rocm_ci

label = "中文"; register_cuda_ci(est_time=60, suite="stage-c-8-gpu-h100", labels=["megatron"])
register_rocm_ci(est_time=60, suite="stage-c-4-gpu-mi350", labels=["megatron"])
