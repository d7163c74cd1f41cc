from tests.ci.ci_register import register_rocm_ci

register_rocm_ci(est_time=100, suite="stage-c-4-gpu-mi350", labels=["short"])
