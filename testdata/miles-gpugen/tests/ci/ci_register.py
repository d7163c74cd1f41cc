"""Registration markers (stand-in for Miles' tests/ci/ci_register.py)."""

_POSITIONAL_PARAMS = ("est_time", "suite")
_VALID_KWARGS = frozenset({"est_time", "suite", "labels", "nightly", "disabled", "hardware"})


def _check_labels(filename, func_name, backend_is_gpu, labels):
    if backend_is_gpu and not labels:
        raise ValueError(f"{filename}: labels in {func_name}() must contain at least one domain label")


def register_cpu_ci(est_time, suite, *, labels=None, nightly=False, disabled=None):
    return None


def register_cuda_ci(est_time, suite, *, labels, hardware, nightly=False, disabled=None):
    return None


def register_rocm_ci(est_time, suite, *, labels, nightly=False, disabled=None):
    return None
