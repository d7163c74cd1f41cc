
# --- miles-ci's verify fixture (testdata/verify/shims/ci_policy_main.py) ---
# Written for miles-ci's tests, not Miles' code: the resolve-ci-policy step's
# command line (python -m tests.ci.ci_policy, facts in the environment, step
# outputs appended to $GITHUB_OUTPUT), answered by miles-ci's independent
# oracle (testdata/oracle, copied beside this file as miles_ci_oracle.py).
if __name__ == "__main__":
    import json
    import os
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import miles_ci_oracle as oracle

    answer = oracle.run_one([
        "--policy", "--repo", ".",
        "--event", os.environ["EVENT_NAME"],
        "--schedule", os.environ.get("SCHEDULE", ""),
        "--pr-labels-json", os.environ.get("PR_LABELS_JSON", ""),
        "--cadence-override", os.environ.get("CADENCE_OVERRIDE", ""),
        "--changed-files", os.environ.get("CHANGED_FILES_PATH", ""),
    ])
    if answer["code"]:
        print("::error::" + answer["stderr"].strip(), file=sys.stderr)
        sys.exit(1)
    out = json.loads(answer["stdout"])
    lines = [
        f"cadence={out['cadence']}",
        f"raw_labels={' '.join(out['raw_labels'])}",
        f"bypass_fastfail={str(out['bypass_fastfail']).lower()}",
        f"skipped_stages={json.dumps(out['skipped_stages'], separators=(',', ':'))}",
    ]
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    print("Resolved CI policy: " + " ".join(lines))
