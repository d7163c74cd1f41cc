register_rocm_ci(est_time=30, suite="stage-c-4-gpu-mi350", labels=["amd"])
