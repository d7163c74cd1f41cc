if x:
	register_cpu_ci(1, "s")
	if y:
	        register_cpu_ci(2, "s")
register_cpu_ci(3, "s")
