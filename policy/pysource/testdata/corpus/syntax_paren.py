register_cpu_ci(1, "s"
x = 2
