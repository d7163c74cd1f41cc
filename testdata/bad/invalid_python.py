def test_broken(:
    pass
register_cpu_ci(1, "stage-b-cpu")
