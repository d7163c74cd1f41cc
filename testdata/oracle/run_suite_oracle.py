#!/usr/bin/env python3
"""An independent oracle for `miles-ci plan` and `miles-ci policy`.

Written from rules.md §2, §3, §4 and §5 alone (no look at the Go code), with
Python's own `ast` module as the parser. It prints what `run_suite.py
--list-only` prints for one suite shard, or, with --policy, the resolved
policy as compact JSON.

Single case:
    run_suite_oracle.py --repo DIR --hw cpu --suite stage-a-cpu [--cadence C]
        [--labels L ...] [--match-all-labels] [--continue-on-error]
        [--auto-partition-id I --auto-partition-size N]
    run_suite_oracle.py --policy --repo DIR --event E [--schedule CRON]
        [--pr-labels-json JSON] [--cadence-override C] [--changed-files FILE]
Batch: `--batch` reads a JSON list of argument lists on stdin and prints a JSON
list of {"code": int, "stdout": str, "stderr": str}, one per case.

The tables (rules §0) default to the values written in rules §1-§4; `--tables
FILE` replaces them with a JSON object holding any of "labels" (list),
"suites" ({"cpu": [...], ...}), "pr_gpu_stages", "broad_pr_scopes",
"no_gpu_paths", "no_gpu_prefixes", "no_gpu_suffixes" (lists) and "crons"
({"CRON": ["CADENCE", [LABEL, ...]]}). The tests derive that JSON by hand from
each variant tree; the oracle never reads the tree's own table files.
"""

import argparse
import ast
import contextlib
import io
import json
import os
import re
import sys

KNOWN_LABELS = [
    "megatron", "model-scripts", "sglang", "fsdp", "short", "long", "ckpt", "lora", "eval",
    "precision", "ft-short", "ft-long", "weight-update", "fully-async", "replay", "qwen35",
    "mooncake", "miles-plugin", "amd",
]
SUITES = {
    "cpu": ["stage-a-cpu", "stage-b-cpu"],
    "cuda": ["stage-b-2-gpu-h200", "stage-c-2-gpu-h200", "stage-c-4-gpu-h200",
             "stage-c-8-gpu-h100", "stage-c-8-gpu-h200"],
    "rocm": ["stage-c-4-gpu-mi350", "nightly-stage-c-2-gpu-mi350",
             "nightly-stage-c-4-gpu-mi350", "nightly-stage-c-8-gpu-mi350"],
}
PR_GPU_STAGES = SUITES["cuda"] + ["stage-c-4-gpu-mi350"]
BROAD_PR_SCOPES = ["nightly", "run-ci-all", "run-ci-image"]
NO_GPU_PATHS = [".pre-commit-config.yaml", "scripts/tools/sync_example_docs.py"]
NO_GPU_PREFIXES = ["docs/"]
NO_GPU_SUFFIXES = [".md", ".mdx"]
CRONS = {"0 15 * * 0-5": ["nightly", []], "0 15 * * 6": ["weekly", []]}
BUILTIN = dict(KNOWN_LABELS=KNOWN_LABELS, SUITES=SUITES, PR_GPU_STAGES=PR_GPU_STAGES,
               BROAD_PR_SCOPES=BROAD_PR_SCOPES, NO_GPU_PATHS=NO_GPU_PATHS,
               NO_GPU_PREFIXES=NO_GPU_PREFIXES, NO_GPU_SUFFIXES=NO_GPU_SUFFIXES, CRONS=CRONS)
TABLE_KEYS = {"labels": "KNOWN_LABELS", "suites": "SUITES", "pr_gpu_stages": "PR_GPU_STAGES",
              "broad_pr_scopes": "BROAD_PR_SCOPES", "no_gpu_paths": "NO_GPU_PATHS",
              "no_gpu_prefixes": "NO_GPU_PREFIXES", "no_gpu_suffixes": "NO_GPU_SUFFIXES", "crons": "CRONS"}


def use_tables(path):
    """Sets the tables: the built-in ones, then the JSON file's, if any."""
    globals().update(BUILTIN)
    if path:
        with open(path) as f:
            given = json.load(f)
        for key, value in given.items():
            globals()[TABLE_KEYS[key]] = value


CADENCES = ["regular", "nightly", "weekly", "release"]
ROOTS = ["tests/fast", "tests/fast-gpu", "tests/e2e", "tests/ci"]
FUNCS = {"register_cpu_ci": "cpu", "register_cuda_ci": "cuda", "register_rocm_ci": "rocm"}
KEYWORDS = ["est_time", "suite", "labels", "nightly", "disabled"]


class OracleError(Exception):
    pass


class Reg:
    def __init__(self, filename, backend, est_time, suite, labels, nightly, disabled, implicit=False):
        self.filename = filename
        self.backend = backend
        self.est_time = est_time
        self.suite = suite
        self.labels = labels
        self.nightly = nightly
        self.disabled = disabled
        self.implicit = implicit


# ---------------------------------------------------------------- §2 registry

def discover(repo):
    out = []
    for root in ROOTS:
        top = os.path.join(repo, root)
        if not os.path.isdir(top):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                if name.startswith("test_") and name.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, name), repo).replace(os.sep, "/")
                    out.append(rel)
    return sorted(out, key=lambda s: s.encode("utf-8"))


def literal(node, what, filename):
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str))):
        return node.value
    raise OracleError(f"{filename}: {what} must be a literal constant")


def parse_call(call, backend, filename):
    if len(call.args) > 2:
        raise OracleError(f"{filename}: too many positional arguments")
    vals = {}
    for name, arg in zip(["est_time", "suite"], call.args):
        if isinstance(arg, ast.Starred):
            raise OracleError(f"{filename}: *args not allowed")
        vals[name] = literal(arg, name, filename)
    for kw in call.keywords:
        if kw.arg is None:
            raise OracleError(f"{filename}: **kwargs not allowed")
        if kw.arg not in KEYWORDS:
            raise OracleError(f"{filename}: unknown keyword {kw.arg}")
        if kw.arg in vals:
            raise OracleError(f"{filename}: duplicated keyword {kw.arg}")
        if kw.arg == "labels" and isinstance(kw.value, ast.List):
            vals["labels"] = [literal(e, "labels", filename) for e in kw.value.elts]
            if not all(isinstance(l, str) for l in vals["labels"]):
                raise OracleError(f"{filename}: labels must be strings")
        else:
            vals[kw.arg] = literal(kw.value, kw.arg, filename)
    est = vals.get("est_time")
    if isinstance(est, bool) or not isinstance(est, (int, float)):
        raise OracleError(f"{filename}: est_time must be a number")
    suite = vals.get("suite")
    if not isinstance(suite, str):
        raise OracleError(f"{filename}: suite must be a string")
    labels = vals.get("labels")
    if labels is None:
        labels = []
    if not isinstance(labels, list):
        raise OracleError(f"{filename}: labels must be a list")
    nightly = vals.get("nightly", False)
    if not isinstance(nightly, bool):
        raise OracleError(f"{filename}: nightly must be a bool")
    disabled = vals.get("disabled")
    if disabled is not None and not isinstance(disabled, str):
        raise OracleError(f"{filename}: disabled must be a string or None")
    if backend in ("cuda", "rocm") and not labels:
        raise OracleError(f"{filename}: {backend} registration needs a label")
    for l in labels:
        if l not in KNOWN_LABELS:
            raise OracleError(f"{filename}: unknown label {l}; valid: {KNOWN_LABELS}")
    return Reg(filename, backend, float(est), suite, labels, nightly, disabled)


def collect_file(repo, filename):
    with open(os.path.join(repo, filename), "rb") as f:
        data = f.read()
    try:
        tree = ast.parse(data, filename)
    except (SyntaxError, ValueError) as e:
        raise OracleError(f"{filename}: not valid Python: {e}")
    regs = []
    for stmt in tree.body:
        if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in FUNCS):
            regs.append(parse_call(stmt.value, FUNCS[stmt.value.func.id], filename))
    fast = filename.startswith("tests/fast/")
    if fast:
        for r in regs:
            if r.backend != "cpu":
                raise OracleError(f"{filename}: {r.backend} registration under tests/fast")
    if not regs:
        if fast:
            if b"register_cpu_ci" in data or b"register_cuda_ci" in data:
                raise OracleError(f"{filename}: mentions a register call that was not parsed")
            return [Reg(filename, "cpu", 1.0, "stage-a-cpu", [], False, None, implicit=True)]
        raise OracleError(f"No CI registry found in {filename}")
    return regs


_REGISTRY_CACHE = {}


def load_registry(repo):
    key = (os.path.abspath(repo), tuple(KNOWN_LABELS))  # the labels decide validity
    if key not in _REGISTRY_CACHE:
        try:
            _REGISTRY_CACHE[key] = ("ok", _load_registry(repo))
        except OracleError as e:
            _REGISTRY_CACHE[key] = ("err", e)
    kind, val = _REGISTRY_CACHE[key]
    if kind == "err":
        raise val
    return val


def _load_registry(repo):
    regs = []
    for f in discover(repo):
        regs.extend(collect_file(repo, f))
    return regs


# ---------------------------------------------------------------- §3 run policy

def run_policy(cadence, raw_labels, match_all):
    if cadence not in CADENCES:
        raise OracleError(f"unknown cadence {cadence}")
    if "nightly" in raw_labels and cadence != "nightly":
        raise OracleError("the nightly label needs cadence nightly")
    requested = set()
    for l in raw_labels:
        if l.startswith("run-ci-") and l[len("run-ci-"):] in KNOWN_LABELS:
            requested.add(l[len("run-ci-"):])
    if "run-ci-all" in raw_labels or cadence in ("weekly", "release"):
        scope = set(KNOWN_LABELS)
    elif cadence == "nightly":
        scope = set(KNOWN_LABELS) - {"long", "ft-long"}
    elif "run-ci-image" in raw_labels:
        scope = set(KNOWN_LABELS) - {"long", "ft-short", "ft-long"}
    else:
        scope = set()
    include = scope | requested
    if match_all:
        include |= set(KNOWN_LABELS)
    return {
        "cadence": cadence,
        "include": include,
        "requested": requested,
        "admit_nightly": cadence in ("nightly", "weekly", "release"),
        "bypass_fastfail": cadence in ("nightly", "weekly", "release") or "bypass-fastfail" in raw_labels,
    }


def selected(reg, pol):
    if reg.nightly and not pol["admit_nightly"]:
        return False
    return not reg.labels or bool(set(reg.labels) & pol["include"])


# ---------------------------------------------------------------- §5 shards and printing

def partition(tests, pid, size):
    order = sorted(tests, key=lambda t: (-t.est_time, t.filename.encode("utf-8")))
    totals = [0.0] * size
    shards = [[] for _ in range(size)]
    for t in order:
        i = min(range(size), key=lambda k: (totals[k], k))
        shards[i].append(t)
        totals[i] += t.est_time
    return shards[pid]


def plan(args):
    hw, suite = args.hw, args.suite
    if hw not in SUITES:
        raise OracleError(f"unknown hw {hw}")
    if suite not in SUITES[hw]:
        raise OracleError(f"Unknown suite {suite} for backend {hw}")
    if (args.auto_partition_id is None) != (args.auto_partition_size is None):
        raise OracleError("partition id and size come together")
    if args.auto_partition_size is not None and not (0 <= args.auto_partition_id < args.auto_partition_size):
        raise OracleError("partition id out of range")
    pol = run_policy(args.cadence, args.labels or [], args.match_all_labels)
    regs = load_registry(args.repo)
    mine = [r for r in regs if r.backend == hw and r.suite == suite and selected(r, pol)]
    skipped = [r for r in mine if r.disabled is not None]
    enabled = [r for r in mine if r.disabled is None]
    if args.auto_partition_size is not None:
        enabled = partition(enabled, args.auto_partition_id, args.auto_partition_size)
        part = f"{args.auto_partition_id + 1}/{args.auto_partition_size} (0-based id={args.auto_partition_id})"
    else:
        part = "full"
    hwname = hw.upper()
    cont = args.continue_on_error or pol["bypass_fastfail"]
    print(f"Policy: cadence={pol['cadence']!r} bypass_fastfail={pol['bypass_fastfail']} "
          f"include_labels={sorted(pol['include'])!r}")
    msg = f"\n{'=' * 60}\n"
    msg += f"Hardware: {hwname}  Suite: {suite}  Cadence: {pol['cadence']}  Continue on error: {cont}  Partition: {part}\n"
    msg += f"{'=' * 60}\n"
    if skipped:
        msg += f"Skipped {len(skipped)} test(s):\n"
        for t in skipped:
            msg += f"  - {t.filename} (reason: {t.disabled or 'disabled'})\n"
        msg += "\n"
    if not enabled:
        msg += f"No tests found for hw={hwname}, suite={suite}, cadence={pol['cadence']}\n"
        msg += "This is expected during incremental migration. Skipping.\n"
    else:
        total = sum(t.est_time for t in enabled)
        msg += f"Enabled {len(enabled)} test(s) (est total {total:.0f}s):\n"
        for t in enabled:
            msg += f"  - {t.filename} (est_time={t.est_time!r}s){' [implicit]' if t.implicit else ''}\n"
    print(msg)
    if not enabled:
        print("No tests to run. Exiting with success.")


# ---------------------------------------------------------------- §3 triggers, §4 stages

LABEL_RE = re.compile(r"^run-ci-[A-Za-z0-9][A-Za-z0-9_.-]*$")
STATUS_RE = re.compile(r"^([ADMTUXB]|[RC][0-9]{1,3})$")


def parse_diff(data):
    """Returns the list of path lists, or None when the diff is unusable."""
    if not data or not data.endswith(b"\0"):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    fields = text[:-1].split("\0")
    entries = []
    i = 0
    while i < len(fields):
        status = fields[i]
        if not STATUS_RE.match(status):
            return None
        n = 2 if status[0] in "RC" else 1
        paths = fields[i + 1:i + 1 + n]
        if len(paths) != n or any(p == "" for p in paths):
            return None
        entries.append(paths)
        i += 1 + n
    return entries


def non_gpu_path(p):
    return (any(p.startswith(x) for x in NO_GPU_PREFIXES) or any(p.endswith(x) for x in NO_GPU_SUFFIXES)
            or p in NO_GPU_PATHS)


def resolve_trigger(a):
    if a.cadence_override:
        if a.cadence_override not in CADENCES:
            raise OracleError(f"unknown cadence {a.cadence_override}")
        return a.cadence_override, []
    if a.event == "pull_request":
        try:
            labels = json.loads(a.pr_labels_json)
        except (ValueError, TypeError):
            raise OracleError("PR labels are not JSON")
        if not isinstance(labels, list) or not all(isinstance(l, str) for l in labels):
            raise OracleError("PR labels must be a JSON array of strings")
        raw = [l for l in labels if l in ("nightly", "bypass-fastfail") or LABEL_RE.match(l)]
        return ("nightly" if "nightly" in raw else "regular"), raw
    if a.event == "schedule":
        if a.schedule in CRONS:
            cadence, labels = CRONS[a.schedule]
            return cadence, list(labels)
        raise OracleError(f"unknown schedule {a.schedule}")
    if a.event == "workflow_dispatch":
        return "regular", []
    raise OracleError(f"unknown event {a.event}")


def policy(a):
    cadence, raw = resolve_trigger(a)
    pol = run_policy(cadence, raw, False)
    skipped = []
    # ci_policy.py prunes on every pull_request, a cadence override included.
    # As ci_policy.py of 31f1ca9: the diff first; an unusable one skips no
    # stage without collecting a registration.
    if a.event == "pull_request":
        data = None
        if a.changed_files and os.path.exists(a.changed_files):
            with open(a.changed_files, "rb") as f:
                data = f.read()
        entries = parse_diff(data)
        if entries is not None:
            regs = load_registry(a.repo)
            pr_regs = [r for r in regs if r.suite in PR_GPU_STAGES and r.disabled is None]
            runnable = {r.suite for r in pr_regs if selected(r, pol)}
            if any(l in raw for l in BROAD_PR_SCOPES):
                explicit = set(runnable)
            else:
                explicit = {r.suite for r in pr_regs
                            if (not r.nightly or pol["admit_nightly"]) and set(r.labels) & pol["requested"]}
            by_file = {}
            for r in regs:
                by_file.setdefault(r.filename, set())
                if r.suite in PR_GPU_STAGES:
                    by_file[r.filename].add(r.suite)
            affected = set()
            for paths in entries:
                for p in paths:
                    if p in by_file:
                        affected |= by_file[p]
                    elif non_gpu_path(p):
                        pass
                    else:
                        affected |= set(PR_GPU_STAGES)
            affected |= explicit
            skipped = sorted(set(PR_GPU_STAGES) - (runnable & affected))
    out = {"cadence": cadence, "raw_labels": raw, "bypass_fastfail": pol["bypass_fastfail"],
           "skipped_stages": skipped}
    print(json.dumps(out, separators=(",", ":")))


def parser():
    p = argparse.ArgumentParser()
    p.add_argument("--policy", action="store_true")
    p.add_argument("--repo", default=".")
    p.add_argument("--hw")
    p.add_argument("--suite")
    p.add_argument("--cadence", default="regular")
    p.add_argument("--labels", nargs="*", default=[])
    p.add_argument("--match-all-labels", action="store_true")
    p.add_argument("--continue-on-error", action="store_true")
    p.add_argument("--auto-partition-id", type=int)
    p.add_argument("--auto-partition-size", type=int)
    p.add_argument("--event", default="")
    p.add_argument("--schedule", default="")
    p.add_argument("--pr-labels-json", default="")
    p.add_argument("--cadence-override", default="")
    p.add_argument("--changed-files", default="")
    p.add_argument("--tables", default="")
    return p


def run_one(argv):
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            a = parser().parse_args(argv)
            use_tables(a.tables)
            (policy if a.policy else plan)(a)
        except OracleError as e:
            print(f"error: {e}", file=sys.stderr)
            code = 1
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main():
    if sys.argv[1:] == ["--batch"]:
        cases = json.load(sys.stdin)
        json.dump([run_one(c) for c in cases], sys.stdout)
        return 0
    r = run_one(sys.argv[1:])
    sys.stdout.write(r["stdout"])
    sys.stderr.write(r["stderr"])
    return r["code"]


if __name__ == "__main__":
    sys.exit(main())
