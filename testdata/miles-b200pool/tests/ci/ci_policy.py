"""Schedules and outputs (stand-in for Miles' tests/ci/ci_policy.py)."""

NIGHTLY_CADENCE = "nightly"
WEEKLY_CADENCE = "weekly"

SCHEDULE_POLICIES = {
    "0 15 * * 0-5": (NIGHTLY_CADENCE, ()),
    "0 15 * * 6": (WEEKLY_CADENCE, ()),
}

UNUSABLE_DIFF_NOTE = "Changed-file diff is unavailable or empty; all selected GPU stages are treated as affected."


def write_outputs(out, needs_cuda_image):
    out.write(f"needs_cuda_image={needs_cuda_image}\n")
