register_cuda_ci(est_time=({1: 2}[1] and 5), suite="s")
register_cuda_ci(est_time=10, suite="s", labels=["megatron"], disabled=("a"
  "b"))
data = {
    "k": [register_cpu_ci(1, "s")],
}
