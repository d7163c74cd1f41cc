from tests.ci import ci_register

ci_register.register_cpu_ci(1, "stage-a-cpu")
