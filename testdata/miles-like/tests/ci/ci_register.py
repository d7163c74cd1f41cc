"""Registration helpers (only the enum matters to the CI tables)."""

from enum import Enum


class HWBackend(Enum):
    CPU = "cpu"
    CUDA = "cuda"
    ROCM = "rocm"
