register_cpu_ci(1, "s")  # trailing comment
register_cpu_ci(2, "s") \
    # hmm
