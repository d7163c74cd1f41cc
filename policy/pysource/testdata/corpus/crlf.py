register_cpu_ci(1, "stage-a-cpu")
if x:
    register_cpu_ci(2, "s")
register_cpu_ci(3, """a
b""")
