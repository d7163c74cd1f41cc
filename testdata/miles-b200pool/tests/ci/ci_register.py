"""Registration markers (stand-in for the B200 pool line's tests/ci/ci_register.py)."""

_POSITIONAL_PARAMS = ("est_time", "suite")
_VALID_KWARGS = frozenset({"est_time", "suite", "labels", "nightly", "disabled", "hardware", "num_gpus"})


def register_cpu_ci(est_time, suite, *, labels=None, nightly=False, disabled=None):
    return None


def register_cuda_ci(est_time, suite, *, labels, hardware, num_gpus=None, nightly=False, disabled=None):
    """num_gpus: the minimum GPUs the test needs, 1 to 8 (default: its home stage's count)."""
    return None


def register_rocm_ci(est_time, suite, *, labels, nightly=False, disabled=None):
    return None
