from tests.ci.ci_register import register_cuda_ci

register_cuda_ci(est_time=60, suite="stage-c-8-gpu-h100", labels=["megatron"], disabled="flaky")
register_cuda_ci(
    est_time=3000,
    suite="stage-c-8-gpu-h200",
    labels=["megatron"],
)
