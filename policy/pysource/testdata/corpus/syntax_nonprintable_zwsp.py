x​ = 1
register_cpu_ci(1, 'stage-b-cpu')
