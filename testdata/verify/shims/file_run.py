"""miles-ci's verify fixture: a single-file plan (rules §10) in the shape of
Miles' `python3 -S -m tests.ci.file_run` (TEST_FILE, CI_IMAGE_TAG and
CI_SOURCE_ROOT in the environment; hw, suite, runs_on, container_image and
timeout_seconds appended to $GITHUB_OUTPUT). Written for miles-ci's tests,
not Miles' code; the registrations come from miles-ci's oracle (copied beside
this file as miles_ci_oracle.py)."""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import miles_ci_oracle as oracle  # noqa: E402

RUNS_ON = {
    "stage-b-2-gpu-h200": ["h200", "2gpu"],
    "stage-c-8-gpu-h100": ["h100", "8gpu"],
    "stage-c-8-gpu-h200": ["h200", "8gpu"],
    "stage-c-4-gpu-h200": ["h200", "4gpu"],
    "stage-c-2-gpu-h200": ["h200", "2gpu"],
}


def plan(test_file, tag, root):
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", tag):
        raise ValueError(f"invalid CI image tag: {tag!r}")
    regs = [r for r in oracle.load_registry(root) if r.filename == test_file]
    if not regs:
        raise ValueError(f"{test_file} has no CI registration")
    supported = [r for r in regs if r.backend in ("cpu", "cuda")]
    if not supported:
        raise ValueError(f"{test_file} is registered only for ROCm")
    if len(supported) > 1:
        raise ValueError(f"{test_file} has multiple CPU/CUDA registrations")
    r = supported[0]
    if r.disabled is not None:
        raise ValueError(f"{test_file} is disabled: {r.disabled}")
    return {
        "hw": r.backend,
        "suite": r.suite,
        "runs_on": json.dumps(RUNS_ON[r.suite]) if r.backend == "cuda" else "",
        "container_image": f"radixark/miles:{tag}",
        "timeout_seconds": str(max(1800, int(r.est_time * 1.25))),
    }


if __name__ == "__main__":
    try:
        out = plan(os.environ["TEST_FILE"], os.environ.get("CI_IMAGE_TAG") or "dev", os.environ.get("CI_SOURCE_ROOT") or ".")
    except (ValueError, oracle.OracleError) as error:
        print(f"::error::{error}", file=sys.stderr)
        sys.exit(1)
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as f:
        f.write("".join(f"{k}={v}\n" for k, v in out.items()))
    print(json.dumps(out, sort_keys=True))
