"""Suites per backend (stand-in for Miles' tests/ci/run_suite.py; not a runner)."""

from enum import Enum, auto

from tests.ci.hardware import CUDA_STAGES


class HWBackend(Enum):
    CPU = auto()
    CUDA = auto()
    ROCM = auto()


CI_SUITES = {
    HWBackend.CPU: ["stage-a-cpu", "stage-b-cpu"],
    HWBackend.CUDA: list(CUDA_STAGES),
    HWBackend.ROCM: ["stage-c-4-gpu-mi350"],
}


def write_has_tests(path, has_tests):
    with open(path, "a") as out:
        out.write(f"has_tests={str(has_tests).lower()}\n")
