"""GPU generations and the CUDA stages (stand-in for the B200 pool line's tests/ci/hardware.py)."""

from dataclasses import dataclass

# The order is the auto preference.
KNOWN_ARCHES: tuple[str, ...] = ("hopper", "blackwell")


@dataclass(frozen=True)
class CudaStage:
    arch: str
    num_gpus: int
    runs_on: tuple[str, ...]


CUDA_STAGES: dict[str, CudaStage] = {
    "stage-b-2-gpu-h200": CudaStage("hopper", 2, ("h200", "2gpu")),
    "stage-c-4-gpu-h200": CudaStage("hopper", 4, ("h200", "4gpu")),
    "stage-c-8-gpu-h200": CudaStage("hopper", 8, ("h200", "8gpu")),
    "stage-c-4-gpu-b200": CudaStage("blackwell", 4, ("b200", "4gpu")),
    "stage-c-8-gpu-b200": CudaStage("blackwell", 8, ("b200", "8gpu")),
}
