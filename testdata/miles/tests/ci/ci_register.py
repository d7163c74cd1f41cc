"""miles-ci test tree: the registration calls test files make when they run.

CI reads registrations statically (miles-ci and run_suite.py parse the call);
when a test file runs, the call only has to succeed. These accept what a
registration accepts (rules §2) and do nothing.
"""


def register_cpu_ci(est_time, suite, *, labels=None, nightly=False, disabled=None):
    """A CPU registration (read statically; a no-op at run time)."""


def register_cuda_ci(est_time, suite, *, labels=None, nightly=False, disabled=None):
    """A CUDA registration (read statically; a no-op at run time)."""


def register_rocm_ci(est_time, suite, *, labels=None, nightly=False, disabled=None):
    """A ROCm registration (read statically; a no-op at run time)."""
