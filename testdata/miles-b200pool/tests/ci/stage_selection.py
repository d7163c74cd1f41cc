"""PR GPU stage tables (stand-in for the B200 pool line's tests/ci/stage_selection.py)."""

PR_GPU_STAGES = frozenset(
    {
        "stage-b-2-gpu-h200",
        "stage-c-4-gpu-h200",
        "stage-c-8-gpu-h200",
        "stage-c-4-gpu-b200",
        "stage-c-8-gpu-b200",
        "stage-c-4-gpu-mi350",
    }
)
_BROAD_PR_SCOPES = frozenset({"nightly", "run-ci-all", "run-ci-image", "run-ci-blackwell-only"})
_NO_GPU_PATHS = frozenset({".pre-commit-config.yaml"})
_NO_GPU_PREFIXES = ("docs/",)
_NO_GPU_SUFFIXES = (".md", ".mdx")
