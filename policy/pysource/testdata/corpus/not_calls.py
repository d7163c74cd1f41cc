x.register_cpu_ci(1, "stage-a-cpu")
y = register_cpu_ci(1, "stage-a-cpu")
register_cpu_ci(1, "stage-a-cpu").foo
register_cpu_ci(1, "stage-a-cpu")(2)
register_cpu_ci(1, "stage-a-cpu"), 2
not register_cpu_ci(1, "stage-a-cpu")
register_cpu_ci(1, "stage-a-cpu")[0]
print(register_cpu_ci(1, "stage-a-cpu"))
lambda: register_cpu_ci(1, "x")
register_cpu_ci(1, "x") if x else None
await_ = register_cpu_ci
(register_cpu_ci)(5, "stage-a-cpu")
((register_cpu_ci(6, "stage-a-cpu")))
