from tests.ci.ci_register import register_rocm_ci
import os

register_rocm_ci(est_time=150, suite="stage-c-4-gpu-mi350", labels=["amd", "short"])


def test_hip_is_visible():
    assert os.environ.get("MILES_HARDWARE_PLATFORM", "rocm") == "rocm"
