register_cpu_ci(est_time=1, "s")
