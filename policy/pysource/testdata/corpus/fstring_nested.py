x = f"{'register_cpu_ci(1, \"s\")'}"
register_cpu_ci(2, "stage-a-cpu")
