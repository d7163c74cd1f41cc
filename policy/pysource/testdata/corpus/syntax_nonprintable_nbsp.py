register_cpu_ci(1, 'stage-b-cpu')
