register_cpu_ci(1, "s")
def f():