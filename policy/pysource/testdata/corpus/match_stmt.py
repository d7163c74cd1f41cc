match x:
    case 1:
        register_cpu_ci(1, "s")
match(register_cpu_ci)
register_cpu_ci(2, "s")
