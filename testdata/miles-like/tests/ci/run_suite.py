import argparse

from tests.ci.ci_register import HWBackend

STAGE_A_CPU = "stage-a-cpu"

HW_MAPPING = {
    "cpu": HWBackend.CPU,
    "cuda": HWBackend.CUDA,
    "rocm": HWBackend.ROCM,
}

# One job of .github/workflows/pr-test.yml (or pr-test-rocm.yml) serves each
# suite; the nightly- suites are run by an external nightly.
CI_SUITES = {
    HWBackend.CPU: [
        STAGE_A_CPU,
        "stage-b-cpu",
    ],
    HWBackend.CUDA: [
        "stage-b-2-gpu-h200",
        "stage-c-8-gpu-h100",
    ],
    HWBackend.ROCM: [
        # pr-test-rocm.yml
        "stage-c-4-gpu-mi350",
        # the external MI350 nightly
        "nightly-stage-c-8-gpu-mi350",
    ],
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hw", choices=HW_MAPPING.keys(), required=True)
    parser.add_argument("--suite", required=True)
    return parser.parse_args()


if __name__ == "__main__":
    main()
