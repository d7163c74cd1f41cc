register_cpu_ci(1, 'stage-b-\N{NOT A CHARACTER NAME}pu')
