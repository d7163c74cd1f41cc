"""Which PR GPU stages a pull request may skip (a stand-in for Miles' file)."""

import re

# The GPU stages that have a job in the PR workflows.
PR_GPU_STAGES = frozenset(
    {
        "stage-b-2-gpu-h200",
        "stage-c-2-gpu-h200",
        "stage-c-4-gpu-h200",
        "stage-c-8-gpu-h100",
        "stage-c-8-gpu-h200",
        "stage-c-4-gpu-mi350",
    }
)

_BROAD_PR_SCOPES = frozenset({"nightly", "run-ci-all", "run-ci-image"})
# Paths whose change cannot affect a GPU stage.
_NO_GPU_PATHS = frozenset({".pre-commit-config.yaml", "scripts/tools/sync_example_docs.py"})
_NO_GPU_PREFIXES = ("docs/",)
_NO_GPU_SUFFIXES = (".md", ".mdx")
_STATUS = re.compile(r"^(?:[ADMTUXB]|[RC][0-9]{1,3})$")


def known_no_gpu_path(path: str) -> bool:
    return path in _NO_GPU_PATHS or path.startswith(_NO_GPU_PREFIXES) or path.endswith(_NO_GPU_SUFFIXES)
