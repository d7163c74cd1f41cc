"""Disabled, with a skip reason that would be a workflow command, a terminal escape and HTML."""
from tests.ci.ci_register import register_cuda_ci
register_cuda_ci(est_time=30, suite="stage-b-2-gpu-h200", labels=["short"],
                 disabled="flaky\n::error file=x::forged \x1b[31mred <script>alert(1)</script> [click](https://evil.example)")
