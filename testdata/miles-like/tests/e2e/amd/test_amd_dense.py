from tests.ci.ci_register import register_rocm_ci

register_rocm_ci(est_time=1200, suite="stage-c-4-gpu-mi350", labels=["amd", "megatron"])
register_rocm_ci(est_time=2400, suite="nightly-stage-c-8-gpu-mi350", labels=["amd"], nightly=True)
