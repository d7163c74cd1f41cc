register_cpu_ci(1, "s")
if x:
