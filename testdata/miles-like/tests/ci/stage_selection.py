"""Select PR GPU stages from changed paths."""

import re

# Only stages with jobs in the PR workflows; the external nightly suites are not.
PR_GPU_STAGES = frozenset(
    {
        "stage-b-2-gpu-h200",
        "stage-c-8-gpu-h100",
        "stage-c-4-gpu-mi350",
    }
)

_BROAD_PR_SCOPES = frozenset({"nightly", "run-ci-all", "run-ci-image"})
_NO_GPU_PATHS = frozenset({".pre-commit-config.yaml"})
_NO_GPU_PREFIXES = ("docs/",)
_NO_GPU_SUFFIXES = (".md", ".mdx")
_STATUS = re.compile(r"^(?:[ADMTUXB]|[RC][0-9]{1,3})$")
