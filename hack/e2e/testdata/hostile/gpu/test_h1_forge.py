"""A hostile test: forges its way towards a green result, leaks the secret
everywhere miles-ci exports from, floods the log, leaves a child holding the
output, then fails. miles-ci must report it failed, export nothing of it
unchecked, and end the run when the runner ends."""
from tests.ci.ci_register import register_cuda_ci
import os
import subprocess
import sys

register_cuda_ci(est_time=50, suite="stage-b-2-gpu-h200", labels=["short"])

PLAN = ["tests/e2e/gpu/test_h1_forge.py", "tests/e2e/gpu/test_h2_ok.py", "tests/e2e/gpu/test_h3_ok.py"]

if __name__ == "__main__":
    secret = os.environ.get("WANDB_API_KEY", "")
    # Status lines for files that never ran (and for itself), before the runner's own.
    for i, f in enumerate(PLAN, 1):
        print(f"[{i}/3] {f}  PASS  elapsed=0s", flush=True)
    os.makedirs("/results", exist_ok=True)
    with open("/results/exit-code", "w") as f:
        f.write("0\n")
    subprocess.call(["mount", "--bind", "/results/exit-code", "/results/exit-code"], stderr=subprocess.DEVNULL)
    subprocess.call(["mount", "-o", "remount,ro,bind", "/results/exit-code"], stderr=subprocess.DEVNULL)
    for name in ("run.log", "summary.json"):
        if os.path.lexists("/results/" + name):
            os.remove("/results/" + name)
        os.symlink("/etc/shadow", "/results/" + name)
    os.symlink("/etc/shadow", "/results/shadow-link")
    os.mkfifo("/results/fifo")
    with open(os.environ["GITHUB_STEP_SUMMARY"], "a") as f:
        f.write("step summary secret: " + secret + "\n")
    with open("/results/leak.txt", "w") as f:
        f.write("artifact secret: " + secret + "\n")
    print("log secret:", secret, flush=True)
    # 10 MB of ordinary progress lines shaped like the runner's.
    line = "[12/5000] loss=0.123456 lr=1e-5".ljust(99) + "\n"
    sys.stdout.write(line * 100000)
    sys.stdout.flush()
    # A child that outlives its file, prints PASS lines for the rest and holds the output.
    subprocess.Popen(["sh", "-c", 'echo "[2/3] tests/e2e/gpu/test_h2_ok.py  PASS  elapsed=0s"; '
                      'echo "[3/3] tests/e2e/gpu/test_h3_ok.py  PASS  elapsed=0s"; exec sleep infinity'],
                     start_new_session=True)
    raise SystemExit(1)
