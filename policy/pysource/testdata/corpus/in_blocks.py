def f():
    register_cpu_ci(1, "stage-a-cpu")

class C:
    register_cpu_ci(2, "stage-a-cpu")

if __name__ == "__main__":
    register_cpu_ci(3, "stage-a-cpu")
else:
    pass
if True: register_cpu_ci(4, "stage-a-cpu")
class D: pass; register_cpu_ci(5, "stage-a-cpu")
@decorator
def g(): register_cpu_ci(6, "stage-a-cpu")
try:
    register_cpu_ci(7, "x")
except Exception:
    register_cpu_ci(8, "x")
finally:
    pass
with open("x") as f: register_cpu_ci(9, "x")
for i in range(3): register_cpu_ci(10, "x")
while False:
  register_cpu_ci(11, "x")
register_cpu_ci(12, "stage-a-cpu")
