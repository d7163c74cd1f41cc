"""Resolve CI cadence, scope, and fast-fail policy from explicit inputs."""

import re

_RUN_CI_PREFIX = "run-ci-"
_WORKFLOW_ONLY_LABELS = {"nightly", "bypass-fastfail"}
_SAFE_RUN_CI_LABEL = re.compile(r"^run-ci-[A-Za-z0-9][A-Za-z0-9_.-]*$")

REGULAR_CADENCE = "regular"
NIGHTLY_CADENCE = "nightly"
WEEKLY_CADENCE = "weekly"
RELEASE_CADENCE = "release"
CI_CADENCES = frozenset({REGULAR_CADENCE, NIGHTLY_CADENCE, WEEKLY_CADENCE, RELEASE_CADENCE})

# Each configured cron maps explicitly, so a new cron cannot inherit nightly.
SCHEDULE_POLICIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "0 15 * * 0-5": (NIGHTLY_CADENCE, ()),
    "0 15 * * 6": (WEEKLY_CADENCE, ()),
}
