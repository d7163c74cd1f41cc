"""miles-ci's stand-in for Miles' tests/ci/run_suite.py.

Written for miles-ci from its rules (rules.md §1-§5) and from what Miles CI
relies on; it is not Miles' code. It takes the same command line, prints the
same `--list-only` plan, and runs a shard the same way:

- cpu: one `pytest FILES -v` (plus `-x` unless continue-on-error);
- cuda and rocm: each file as `python3 FILE` in its own session, with a
  timeout of max(--timeout-per-file, est_time * 1.25) (+600 s with retry);
  on timeout the file's process group is killed; with --enable-retry a
  failure whose output looks like an accuracy or performance miss (and not
  like a code error) is retried after --retry-wait-seconds;
- it stops at the first failure unless continue-on-error (the flag, or the
  policy's bypass_fastfail) and exits 255 when a file failed;
- with GITHUB_ACTIONS=true it prints `::group::` lines and one status line
  per attempt: `[i/n] FILE  PASS|FAIL|TIMEOUT  elapsed=Ns [exit=N]
  [timeout_after=Ns] [retry_of=attempt=N]`;
- with MILES_CI_GATE_RECORD_DIR (the metric gate, rules §16), each cuda or
  rocm attempt gets its own record folder BASE/KEY/attempt-N in that variable,
  and a passing attempt's records (*.jsonl, {"metric": K, "series": [...]} a
  line) are merged into BASE/KEY/attempt-N.merged.jsonl, each metric's series
  joined and sorted by step, before its status line.

A test tree may hold tests/ci/run_suite_defaults.json to change the defaults
of --timeout-per-file and --retry-wait-seconds (miles-ci's end-to-end fixture
does, so a timeout takes seconds, not half an hour).
"""

import argparse
import ast
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from enum import Enum


class HWBackend(Enum):
    CPU = "cpu"
    CUDA = "cuda"
    ROCM = "rocm"


# The suites of each backend (rules §1); miles-ci reads this table.
CI_SUITES = {
    HWBackend.CPU: [
        "stage-a-cpu",
        "stage-b-cpu",
    ],
    HWBackend.CUDA: [
        "stage-b-2-gpu-h200",
        "stage-c-8-gpu-h100",
        "stage-c-8-gpu-h200",
        "stage-c-4-gpu-h200",
        "stage-c-2-gpu-h200",
    ],
    HWBackend.ROCM: [
        "stage-c-4-gpu-mi350",
        "nightly-stage-c-8-gpu-mi350",
        "nightly-stage-c-4-gpu-mi350",
        "nightly-stage-c-2-gpu-mi350",
    ],
}

KNOWN_LABELS = [
    "megatron", "model-scripts", "sglang", "fsdp", "short", "long", "ckpt", "lora", "eval",
    "precision", "ft-short", "ft-long", "weight-update", "fully-async", "replay", "qwen35",
    "mooncake", "miles-plugin", "amd",
]
CADENCES = ["nightly", "regular", "release", "weekly"]
ROOTS = ["tests/fast", "tests/fast-gpu", "tests/e2e", "tests/ci"]
REGISTER = {"register_cpu_ci": HWBackend.CPU, "register_cuda_ci": HWBackend.CUDA, "register_rocm_ci": HWBackend.ROCM}
HW_BY_FLAG = {b.value: b for b in HWBackend}

# Output that marks a failure as worth one more try, and output that marks a
# real code error (checked first).
ACCURACY_OR_PERF = [r"accuracy", r"score", r"latency", r"throughput", r"not (greater|less) than", r"AssertionError"]
CODE_ERROR = [r"SyntaxError", r"ImportError", r"ModuleNotFoundError", r"NameError", r"TypeError",
              r"AttributeError", r"out of memory", r"Segmentation fault", r"FileNotFoundError"]


class Test:
    def __init__(self, filename, backend, est_time, suite, labels, nightly, disabled, implicit=False):
        self.filename, self.backend, self.est_time, self.suite = filename, backend, est_time, suite
        self.labels, self.nightly, self.disabled, self.implicit = labels, nightly, disabled, implicit


def discover(root="."):
    found = []
    for top in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top), followlinks=True):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in filenames:
                if name.startswith("test_") and name.endswith(".py"):
                    found.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return sorted(found, key=lambda f: f.encode())


def fail(filename, message):
    raise SystemExit(f"{filename}: {message}")


def constant(node, what, filename):
    if isinstance(node, ast.Constant):
        return node.value
    fail(filename, f"{what} must be a literal constant")


def registration(call, filename):
    values = {}
    if len(call.args) > 2:
        fail(filename, "too many positional arguments")
    for name, arg in zip(["est_time", "suite"], call.args):
        values[name] = constant(arg, name, filename)
    for kw in call.keywords:
        if kw.arg is None or kw.arg not in ("est_time", "suite", "labels", "nightly", "disabled") or kw.arg in values:
            fail(filename, f"bad argument {kw.arg}")
        if kw.arg == "labels" and isinstance(kw.value, ast.List):
            values["labels"] = [constant(e, "labels", filename) for e in kw.value.elts]
        else:
            values[kw.arg] = constant(kw.value, kw.arg, filename)
    labels = values.get("labels") or []
    backend = REGISTER[call.func.id]
    unknown = [label for label in labels if label not in KNOWN_LABELS]
    if unknown or (backend != HWBackend.CPU and not labels):
        fail(filename, f"labels {labels} must be known labels, at least one for a GPU test")
    return Test(filename, backend, float(values["est_time"]), values["suite"], labels,
                bool(values.get("nightly", False)), values.get("disabled"))


def collect(filename):
    with open(filename, "rb") as f:
        source = f.read()
    tests = []
    for stmt in ast.parse(source, filename).body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in REGISTER:
            tests.append(registration(call, filename))
    if not tests and filename.startswith("tests/fast/"):
        return [Test(filename, HWBackend.CPU, 1.0, "stage-a-cpu", [], False, None, implicit=True)]
    if not tests:
        fail(filename, f"No CI registry found in {filename}")
    return tests


class Policy:
    def __init__(self, cadence, raw_labels, match_all):
        if "nightly" in raw_labels and cadence != "nightly":
            raise SystemExit("The nightly workflow label requires cadence='nightly'")
        requested = {label[len("run-ci-"):] for label in raw_labels
                     if label.startswith("run-ci-") and label[len("run-ci-"):] in KNOWN_LABELS}
        scope = set()
        if "run-ci-all" in raw_labels or cadence in ("weekly", "release"):
            scope = set(KNOWN_LABELS)
        elif cadence == "nightly":
            scope = set(KNOWN_LABELS) - {"long", "ft-long"}
        elif "run-ci-image" in raw_labels:
            scope = set(KNOWN_LABELS) - {"long", "ft-short", "ft-long"}
        self.cadence = cadence
        self.include = scope | requested | (set(KNOWN_LABELS) if match_all else set())
        self.admit_nightly = cadence in ("nightly", "weekly", "release")
        self.bypass_fastfail = self.admit_nightly or "bypass-fastfail" in raw_labels

    def selects(self, test):
        if test.nightly and not self.admit_nightly:
            return False
        return not test.labels or bool(set(test.labels) & self.include)


def partition(tests, index, size):
    shards, totals = [[] for _ in range(size)], [0.0] * size
    for test in sorted(tests, key=lambda t: (-t.est_time, t.filename)):
        best = min(range(size), key=lambda i: totals[i])
        shards[best].append(test)
        totals[best] += test.est_time
    return shards[index]


def print_plan(args, policy, continue_on_error, enabled, skipped):
    hw = HW_BY_FLAG[args.hw]
    part = "full"
    if args.auto_partition_size:
        part = f"{args.auto_partition_id + 1}/{args.auto_partition_size} (0-based id={args.auto_partition_id})"
    rule = "=" * 60
    text = f"\n{rule}\nHardware: {hw.name}  Suite: {args.suite}  Cadence: {policy.cadence}  "
    text += f"Continue on error: {continue_on_error}  Partition: {part}\n{rule}\n"
    if skipped:
        text += f"Skipped {len(skipped)} test(s):\n"
        text += "".join(f"  - {t.filename} (reason: {t.disabled or 'disabled'})\n" for t in skipped) + "\n"
    if not enabled:
        text += f"No tests found for hw={hw.name}, suite={args.suite}, cadence={policy.cadence}\n"
        text += "This is expected during incremental migration. Skipping.\n"
    else:
        text += f"Enabled {len(enabled)} test(s) (est total {sum(t.est_time for t in enabled):.0f}s):\n"
        text += "".join(f"  - {t.filename} (est_time={t.est_time}s){' [implicit]' if t.implicit else ''}\n"
                        for t in enabled)
    print(text, flush=True)


def in_actions():
    return os.environ.get("GITHUB_ACTIONS") == "true"


def status_line(i, n, filename, status, elapsed, exit_code=None, timeout_after=None, retry_of=None):
    if not in_actions():
        return
    name = filename.replace("\r", "\\r").replace("\n", "\\n")
    line = f"[{i}/{n}] {name}  {status}  elapsed={int(elapsed)}s"
    if exit_code is not None:
        line += f" exit={exit_code}"
    if timeout_after is not None:
        line += f" timeout_after={int(timeout_after)}s"
    if retry_of is not None:
        line += f" retry_of=attempt={retry_of}"
    print(line, flush=True)


GATE_RECORD_DIR = "MILES_CI_GATE_RECORD_DIR"


def record_dir(filename, attempt):
    """The attempt's metric-record folder (KEY: the path with [^A-Za-z0-9._-]
    as "_", a dash, 10 hex digits of its SHA-1), or None without the variable."""
    base = os.environ.get(GATE_RECORD_DIR)
    if not base:
        return None
    key = re.sub(r"[^A-Za-z0-9._-]", "_", filename) + "-" + hashlib.sha1(filename.encode()).hexdigest()[:10]
    path = os.path.join(base, key, f"attempt-{attempt}")
    os.makedirs(path, exist_ok=True)
    return path


def merge_records(folder):
    """Merges a passing attempt's records into FOLDER.merged.jsonl."""
    merged = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line:
                    rec = json.loads(line)
                    merged.setdefault(rec["metric"], []).extend(rec["series"])
    for points in merged.values():
        points.sort(key=lambda p: (p[0] is None, p[0]))
    with open(folder + ".merged.jsonl", "w", encoding="utf-8") as f:
        for metric, points in merged.items():
            f.write(json.dumps({"metric": metric, "series": points}) + "\n")


def run_file(filename, timeout, capture, records=None):
    """Runs one file; returns (exit code or None on timeout, captured output)."""
    env = None
    if records is not None:
        env = dict(os.environ, **{GATE_RECORD_DIR: records})
    proc = subprocess.Popen(["python3", os.path.join(os.getcwd(), filename)], start_new_session=True, env=env,
                            stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.STDOUT if capture else None, text=True, errors="replace")
    output = []
    reader = None
    if capture:
        def pump():
            for line in proc.stdout:
                print(line, end="", flush=True)
                output.append(line)
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        code = None
    if reader:
        reader.join(timeout=5)
    return code, "".join(output)


def retriable(output):
    if any(re.search(p, output, re.IGNORECASE) for p in CODE_ERROR):
        return False
    return any(re.search(p, output, re.IGNORECASE) for p in ACCURACY_OR_PERF)


def run_gpu_files(tests, timeout_per_file, continue_on_error, enable_retry, max_attempts, retry_wait):
    passed, failed, retried = [], [], []
    n = len(tests)
    for i, test in enumerate(tests, 1):
        timeout = max(timeout_per_file, int(test.est_time * 1.25))
        attempts = max_attempts if enable_retry else 1
        ok = False
        for attempt in range(1, attempts + 1):
            if in_actions():
                print(f"::group::{test.filename}  ({i}/{n} est={int(test.est_time)}s attempt={attempt})", flush=True)
            print(f"Begin ({i}/{n}): python3 {test.filename}", file=sys.stderr, flush=True)
            start = time.monotonic()
            records = record_dir(test.filename, attempt)
            code, output = run_file(test.filename, timeout, capture=enable_retry, records=records)
            elapsed = time.monotonic() - start
            if in_actions():
                print("::endgroup::", flush=True)
            retry_of = attempt - 1 if attempt > 1 else None
            if code == 0:
                if records is not None:
                    try:
                        merge_records(records)
                    except (OSError, ValueError, KeyError, TypeError) as e:
                        print(f"[CI Gate] record merge failed for {test.filename}: {e}", file=sys.stderr, flush=True)
                status_line(i, n, test.filename, "PASS", elapsed, retry_of=retry_of)
                passed.append(test.filename)
                ok = True
                break
            if code is None:
                status_line(i, n, test.filename, "TIMEOUT", elapsed, timeout_after=timeout, retry_of=retry_of)
                failed.append((test.filename, f"timeout after {timeout}s"))
                break
            status_line(i, n, test.filename, "FAIL", elapsed, exit_code=code, retry_of=retry_of)
            if attempt < attempts and retriable(output):
                retried.append(test.filename)
                print(f"[CI Retry] {test.filename} looks like an accuracy or performance miss; "
                      f"retrying in {retry_wait}s", file=sys.stderr, flush=True)
                time.sleep(retry_wait)
                continue
            failed.append((test.filename, f"exit code {code}"))
            break
        if not ok and not continue_on_error:
            break
    print(f"\nTest Summary: {len(passed)}/{n} passed", file=sys.stderr, flush=True)
    for name in passed:
        print(f"PASSED: {name}", file=sys.stderr)
    for name, why in failed:
        print(f"FAILED: {name} ({why})", file=sys.stderr)
    if retried and os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a") as f:
            f.write(f"**Retried {len(retried)} test(s):** {', '.join(retried)}\n")
    return 0 if not failed else -1


def defaults():
    """The fixture's own defaults for the timeout and retry wait, if any."""
    path = os.path.join("tests", "ci", "run_suite_defaults.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {}


def main():
    d = defaults()
    p = argparse.ArgumentParser(description="Run a Miles CI suite shard (miles-ci stand-in).")
    p.add_argument("--hw", choices=list(HW_BY_FLAG), required=True)
    p.add_argument("--suite", required=True)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--cadence", choices=CADENCES, default="regular")
    group.add_argument("--nightly", dest="cadence", action="store_const", const="nightly")
    p.add_argument("--timeout-per-file", type=int, default=d.get("timeout_per_file", 1800))
    p.add_argument("--continue-on-error", action="store_true")
    p.add_argument("--auto-partition-id", type=int)
    p.add_argument("--auto-partition-size", type=int)
    p.add_argument("--enable-retry", action="store_true")
    p.add_argument("--max-attempts", type=int, default=2)
    p.add_argument("--retry-wait-seconds", type=int, default=d.get("retry_wait_seconds", 60))
    p.add_argument("--retry-timeout-increase", type=int, default=600)
    p.add_argument("--list-only", action="store_true")
    p.add_argument("--labels", nargs="*", default=[])
    p.add_argument("--match-all-labels", action="store_true")
    args = p.parse_args()
    if (args.auto_partition_id is None) != (args.auto_partition_size is None):
        p.error("--auto-partition-id and --auto-partition-size must be specified together.")
    if args.auto_partition_size is not None and not 0 <= args.auto_partition_id < args.auto_partition_size:
        p.error(f"--auto-partition-id must be in range [0, {args.auto_partition_size}), but got {args.auto_partition_id}")

    hw = HW_BY_FLAG[args.hw]
    if args.suite not in CI_SUITES[hw]:
        raise SystemExit(f"Unknown suite {args.suite} for backend {hw.name}")
    tests = [t for f in discover() for t in collect(f)]
    policy = Policy(args.cadence, args.labels or [], args.match_all_labels)
    continue_on_error = args.continue_on_error or policy.bypass_fastfail
    print(f"Policy: cadence={policy.cadence!r} bypass_fastfail={policy.bypass_fastfail} "
          f"include_labels={sorted(policy.include)}", flush=True)
    mine = [t for t in tests if t.backend == hw and t.suite == args.suite and policy.selects(t)]
    enabled = [t for t in mine if t.disabled is None]
    skipped = [t for t in mine if t.disabled is not None]
    if args.auto_partition_size:
        enabled = partition(enabled, args.auto_partition_id, args.auto_partition_size)
    print_plan(args, policy, continue_on_error, enabled, skipped)
    if not enabled:
        print("No tests to run. Exiting with success.", flush=True)
        return 0
    if args.list_only:
        return 0
    if hw == HWBackend.CPU:
        cmd = ["pytest", *[t.filename for t in enabled], "-v"] + ([] if continue_on_error else ["-x"])
        print(f"Running: {' '.join(cmd)}", flush=True)
        return subprocess.call(cmd)
    timeout = args.timeout_per_file + (args.retry_timeout_increase if args.enable_retry else 0)
    return run_gpu_files(enabled, timeout, continue_on_error, args.enable_retry, args.max_attempts,
                         args.retry_wait_seconds)


if __name__ == "__main__":
    sys.exit(main())
