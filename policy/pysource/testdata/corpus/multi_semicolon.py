import os; register_cpu_ci(1, "stage-a-cpu"); register_cpu_ci(2.5, 'stage-b-cpu', nightly=True)
x = 1 ; register_rocm_ci(est_time=1e3, suite="stage-c-4-gpu-mi350", labels=['amd'],)
