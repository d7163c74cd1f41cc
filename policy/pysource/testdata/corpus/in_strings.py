"""
register_cpu_ci(1, "stage-a-cpu")
"""
s = 'register_cpu_ci(1, "x")'
t = r"register_cuda_ci(\"a\")"
u = f"{register_cpu_ci}"
# register_cpu_ci(1, "stage-a-cpu")
b = rb'''register_cpu_ci(1, "s")
'''
register_cpu_ci(3, "stage-a-cpu", disabled="it's \"quoted\" \n and \\ escaped \x41\u00e9")
