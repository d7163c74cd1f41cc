register_cuda_ci(\
    est_time=100,
    suite="stage-c-2-gpu-h200", \
    labels=[
        "megatron",  # a comment with ) and "quote
        "fsdp",
    ],
)
x = 1 + \
    2; register_cpu_ci(7, "stage-a-cpu")
