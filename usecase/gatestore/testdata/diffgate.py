"""Differential check of `miles-ci gate` against Miles' own evaluate_gate.

miles-ci's own script (usecase/gatestore's TestAgainstMiles runs it): it
imports the gate from the Miles checkout in the current folder (its tests/ci)
and never copies it. It generates test files with register_ci_gate
declarations, merged records and SQLite stores with history rows, runs Miles'
evaluate_gate as its harness calls it (the file's CIRegistry; executing_suite
where the gate takes one) and `miles-ci gate` on the same inputs, and compares
every field of every coordinate (the band against Miles' evaluate_constraint)
and the file's verdict. Prints the count of cases and of differences; exits 1
on a difference.
"""
import argparse, inspect, json, math, os, random, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.getcwd())
from tests.ci.ci_register import ut_parse_one_file, HWBackend  # noqa: E402
from tests.ci.metric_history.gate import evaluate_gate  # noqa: E402
from tests.ci.metric_history.register import parse_ci_gate_specs, GATE_DEFAULTS  # noqa: E402
from tests.ci.metric_history.constraints import evaluate_constraint  # noqa: E402
from tests.ci.metric_history import SQLiteMetricHistoryStore, RunIdentity, RunProvenance, MetricSample  # noqa: E402

EXECUTING = "executing_suite" in inspect.signature(evaluate_gate).parameters
DIR = "tests/e2e/gatediff"
METRICS = list(GATE_DEFAULTS) + ["custom/loss", "m\u00e9trique/\u03bb", "perf/tok_s"]
SUITES = ["stage-c-4-gpu-h200", "stage-c-8-gpu-h100"]


def rnum(r):
    return r.choice(["0", "1", "0.5", "0.02", "1e-3", "2", "0.0", "-0.0", "1_0", "0x1", "3.25", "1e20", "0.1", "10", "100.0", "0.8"])


def constraint_lit(r):
    params = ["rel_up", "abs_floor_up", "rel_down", "abs_floor_down"]
    keys = [p for p in params if r.random() < 0.55]
    if r.random() < 0.9:
        if not any(k.endswith("up") for k in keys):
            keys.append(r.choice(params[:2]))
        if not any(k.endswith("down") for k in keys):
            keys.append(r.choice(params[2:]))
    r.shuffle(keys)
    items = [f'"{k}": {rnum(r)}' for k in keys]
    bad = r.random() * 2
    if bad < 0.03:
        items.append('"rel_side": 0.1')
    elif bad < 0.05:
        items.append(f'"{r.choice(params)}": -1' if not keys else f'"{keys[0]}": 0.1')  # duplicate key or negative
    elif bad < 0.06:
        items = [f'"{keys[0]}": True'] + items[1:] if keys else items
    elif bad < 0.07:
        items = [f'"{keys[0]}": "0.1"'] + items[1:] if keys else items
    elif bad < 0.08:
        return "[" + ", ".join(items) + "]"
    elif bad < 0.09:
        items.append("**extra")
    elif bad < 0.1:
        return "dict(rel_up=0.1)"
    sep = r.choice([", ", ",", ",\n    "])
    return "{" + sep.join(items) + r.choice(["", ","]) + "}"


def steps_lit(r):
    c = r.random()
    if c < 0.25:
        return '"last"'
    if c < 0.5:
        return r.choice(['"all"', "'all'", '("all")'])
    if c < 0.95:
        n = r.randint(1, 3)
        steps = r.sample(range(0, 5), n)
        return "[" + ", ".join(r.choice([str(s), str(s), hex(s)]) for s in steps) + "]"
    return r.choice(["[]", "[-1]", "[1, 1]", "[True]", "[0.0]", '"first"', "(0, 1)", "0", "[0, *x]", "[00]", "-1", "[2**3]"])


def call(r):
    c = r.random()
    metric = r.choice(METRICS)
    if c < 0.3:
        return f'register_ci_gate(metric_key="{metric}")'
    args = [f'metric_key="{metric}"']
    if r.random() < 0.95 or metric not in GATE_DEFAULTS:
        args.append(f"steps={steps_lit(r)}")
    if r.random() < 0.95 or metric not in GATE_DEFAULTS:
        args.append(f"constraint={constraint_lit(r)}")
    if r.random() < 0.1:
        args.append(r.choice(["enforce=True", "enforce=False", 'enforce="yes"', 'allowlist_reason="flaky"', "allowlist_reason=None", "allowlist_reason=1"]))
    r.shuffle(args)
    bad = r.random()
    if bad < 0.02:
        args.insert(0, '"train/ppo_kl"')
    elif bad < 0.03:
        args.append("threshold=1")
    elif bad < 0.04:
        args = [a for a in args if not a.startswith("metric_key")]
    elif bad < 0.05:
        args.append("**kw")
    elif bad < 0.06:
        args = ["metric_key=5" if a.startswith("metric_key") else a for a in args]
    elif bad < 0.07:
        args = ["metric_key=NAME" if a.startswith("metric_key") else a for a in args]
    return "register_ci_gate(" + ", ".join(args) + ")"


def test_file(r, suite):
    lines = ["from tests.ci.ci_register import register_cuda_ci", "from tests.ci.metric_history import register_ci_gate", ""]
    hw = ', hardware=["hopper"]' if EXECUTING else ""
    lines.append(f'register_cuda_ci(est_time=300, suite="{suite}", labels=["megatron"]{hw})')
    n = r.choice([0, 1, 1, 2, 2, 3])
    for _ in range(n):
        lines.append(call(r))
    if r.random() < 0.05:
        lines.append("if True:\n    register_ci_gate(metric_key=1)")  # not top level: ignored
    return "\n".join(lines) + "\n"


def value(r):
    c = r.random()
    if c < 0.75:
        return round(r.uniform(-0.2, 1.5), r.choice([1, 3, 6, 12]))
    if c < 0.8:
        return r.randint(-3, 10)
    if c < 0.84:
        return r.choice(["NaN", "Infinity", "-Infinity"])
    if c < 0.86:
        return r.choice([float("nan"), float("inf")])  # bare NaN / Infinity tokens
    if c < 0.9:
        return r.choice([True, None, "x", [1]])
    if c < 0.93:
        return r.choice([1e308 * 10 if False else 1.5e308, 1e-320, 123456789012345678901234567890])
    return r.uniform(0, 1)


def series(r):
    c = r.random()
    if c < 0.03:
        return []
    if c < 0.04:
        return "ab"
    if c < 0.05:
        return {"a": 1}
    pts = []
    n = r.randint(1, 5)
    for k in range(n):
        step = k
        sc = r.random()
        if sc < 0.05:
            step = None
        elif sc < 0.08:
            step = float(k)
        elif sc < 0.1:
            step = r.randint(0, 3)  # maybe a duplicate
        elif sc < 0.11:
            step = True
        pc = r.random()
        if pc < 0.03:
            pts.append([step])
        elif pc < 0.05:
            pts.append([step, value(r), "extra"])
        elif pc < 0.055:
            pts.append({"s": 1, "v": 2})
        elif pc < 0.06:
            pts.append(7)
        else:
            pts.append([step, value(r)])
    if r.random() < 0.2:
        r.shuffle(pts)
    return pts


def record(r, metrics):
    lines = []
    for m in metrics:
        if r.random() < 0.1:
            continue
        lines.append(json.dumps({"metric": m, "series": series(r)}))
        if r.random() < 0.03:
            lines.append(json.dumps({"metric": m, "series": series(r)}))  # a repeated metric: the last wins
    extra = r.random()
    if extra < 0.03:
        lines.append("{not json")
    elif extra < 0.05:
        lines.append("")
        lines.append("   ")
    elif extra < 0.06:
        lines.append(json.dumps({"series": []}))
    elif extra < 0.07:
        lines.append(json.dumps({"metric": ["x"], "series": []}))
    elif extra < 0.08:
        lines.append(json.dumps({"metric": 5, "series": [[0, 1]]}))
    r.shuffle(lines)
    sep = r.choice(["\n", "\n", "\r\n", "\n\n"])
    return sep.join(lines) + r.choice(["\n", "", "\n\u00a0"])


PSQL = [p for p in __import__("glob").glob("/usr/lib/postgresql/*/bin/psql")] + ["psql"]


def psql(url, *args, stdin=None):
    p = subprocess.run([PSQL[0], url, "-v", "ON_ERROR_STOP=1", "-q", *args], input=stdin, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("psql: " + p.stderr)
    return p.stdout


PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, test_path TEXT NOT NULL, backend TEXT NOT NULL, suite TEXT NOT NULL,
  commit_sha TEXT NOT NULL, pr_number INTEGER, github_run_id BIGINT, github_run_attempt INTEGER, event_name TEXT, ref TEXT,
  created_at TIMESTAMPTZ NOT NULL, trusted BOOLEAN NOT NULL);
CREATE TABLE IF NOT EXISTS metric_values (run_id TEXT NOT NULL REFERENCES runs(run_id), metric_key TEXT NOT NULL,
  steps_key TEXT NOT NULL, constraint_key TEXT NOT NULL, step INTEGER NOT NULL, value DOUBLE PRECISION NOT NULL);
"""


def to_postgres(url, db):
    """The SQLite store's rows, the same in the Postgres store (Miles' Neon tables)."""
    import csv, io, sqlite3
    psql(url, "-c", PG_SCHEMA)
    psql(url, "-c", "TRUNCATE metric_values, runs")
    con = sqlite3.connect(db)
    for table, conv in (("runs", lambda row: row[:11] + ("t" if row[11] else "f",)), ("metric_values", lambda row: row[:5] + (repr(row[5]),))):
        buf = io.StringIO()
        w = csv.writer(buf)
        for row in con.execute(f"SELECT * FROM {table}"):
            w.writerow(["" if v is None else v for v in conv(row)])
        psql(url, "-c", f"\\copy {table} FROM pstdin WITH (FORMAT csv)", stdin=buf.getvalue())
    con.close()


def store(r, path, specs, test_path, suite, unique_times=False):
    s = SQLiteMetricHistoryStore(path)
    s._conn.execute("PRAGMA synchronous=OFF")
    coords = []
    for sp in specs:
        for step in [-1, 0, 1, 2, 3]:
            coords.append((sp.metric_key, sp.steps_key, sp.constraint_key, step))
    times = [f"2026-08-{d:02d}T1{h}:00:00+00:00" for d in range(1, 6) for h in range(3)]
    nruns = r.choice([0, 0, 1, 3, 8, 25])
    for k in range(nruns):
        if unique_times:  # Postgres orders ties its own way: no ties
            times = [f"2026-08-01T00:{k // 60:02d}:{k % 60:02d}.{r.randint(0, 999999):06d}+00:00"]
        ident = RunIdentity(test_path, "cuda", suite if r.random() < 0.9 else "stage-other")
        vals = []
        for c in coords:
            if r.random() < 0.7:
                v = r.choice([r.uniform(0, 1.2), r.uniform(-0.1, 0.1), r.randint(0, 3) * 0.5, 1e300])
                vals.append(MetricSample(c[0], c[1], c[2], c[3], v))
        s.write_run(ident, RunProvenance("abc", None, None, None, None, None), r.choice(times), trusted=r.random() < 0.8, values=vals)
    s.close()


def fr(x):
    if x is None:
        return None
    if isinstance(x, str):
        x = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[x]
    return repr(float(x))


def python_side(test_path, rec_path, db, suite):
    try:
        regs = [g for g in ut_parse_one_file(test_path) if g.backend == HWBackend.CUDA]
        registry = regs[0]
        st = SQLiteMetricHistoryStore(db)
        kw = {"executing_suite": suite} if EXECUTING else {}
        res = evaluate_gate(test_path, rec_path, st, registry=registry, **kw)
        specs = {(sp.metric_key, sp.steps_key, sp.constraint_key): sp for sp in parse_ci_gate_specs(test_path)}
    except Exception as e:  # the hook logs it: no verdict
        return {"error": f"{type(e).__name__}: {e}"}
    coords = []
    for m in res.metrics:
        band = None
        if m.baseline_mean is not None:
            o = evaluate_constraint(specs[(m.metric_key, m.steps_key, m.constraint_key)].constraint, m.current, m.baseline_mean)
            band = [fr(o.lo), fr(o.hi)]
        coords.append({"metric": m.metric_key, "steps_key": m.steps_key, "constraint_key": m.constraint_key,
                       "step": m.step, "at_step": m.at_step, "status": m.historical_status.value, "current": fr(m.current),
                       "baseline_n": m.baseline_n, "baseline_mean": fr(m.baseline_mean), "band": band, "reason": m.reason})
    return {"identity": [res.test_path, res.backend, res.suite], "trusted": res.trusted, "coordinates": coords}


def go_side(binary, test_path, rec_path, db, suite, env=None):
    p = subprocess.run([binary, "gate", "--repo", ".", "--file", test_path, "--record", rec_path, "--db", db,
                        "--backend", "cuda", "--suite", suite, "--json"], capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1) or not p.stdout:
        return {"error": "exit %d: %s" % (p.returncode, p.stderr.strip()[:300]), "fatal": True}
    ans = json.loads(p.stdout)
    v = ans["verdict"]
    if v["verdict"] == "error":
        return {"error": v["error"]}
    coords = []
    for c in v["coordinates"]:
        band = [fr(c["band"]["lo"]), fr(c["band"]["hi"])] if c["band"] else None
        coords.append({"metric": c["metric"], "steps_key": c["steps_key"], "constraint_key": c["constraint_key"],
                       "step": c["step"], "at_step": c["at_step"], "status": c["status"], "current": fr(c["current"]),
                       "baseline_n": c["baseline_n"], "baseline_mean": fr(c["baseline_mean"]), "band": band, "reason": c["reason"]})
    return {"identity": [v["test_path"], v["backend"], v["suite"]], "trusted": v["verdict"] == "trusted", "coordinates": coords}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--state", default="?")
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("--postgres", default="", help="also judge against the same rows in this Postgres database (its runs and metric_values are replaced)")
    a = ap.parse_args()
    r = random.Random(a.seed)
    os.makedirs(DIR, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="gatediff-")
    diffs = errors_both = verdicts = coords_n = 0
    shown = 0
    try:
        for i in range(a.cases):
            suite = r.choice(SUITES)
            test_path = f"{DIR}/test_case_{i}.py"
            with open(test_path, "w") as f:
                f.write(test_file(r, suite))
            try:
                specs = parse_ci_gate_specs(test_path)
            except Exception:
                specs = []
            metrics = sorted({s.metric_key for s in specs} | {r.choice(METRICS)})
            rec_path = os.path.join(tmp, f"rec_{i}.jsonl")
            with open(rec_path, "w", encoding="utf-8", newline="") as f:
                f.write(record(r, metrics))
            db = os.path.join(tmp, f"db_{i}.sqlite")
            store(r, db, specs, test_path, suite, unique_times=bool(a.postgres))
            exec_suite = suite
            if EXECUTING and r.random() < 0.2:
                exec_suite = "stage-c-8-gpu-b200"
            py = python_side(test_path, rec_path, db, exec_suite)
            go = go_side(a.bin, test_path, rec_path, db, exec_suite)
            same = ("error" in py) == ("error" in go) and ("error" in py or py == go)
            if a.postgres:
                to_postgres(a.postgres, db)
                pg = go_side(a.bin, test_path, rec_path, "", exec_suite, env=dict(os.environ, MILES_CI_GATE_DB=a.postgres))
                if ("error" in pg) != ("error" in go) or ("error" not in go and pg != go):
                    same = False
                    go = {"sqlite": go, "postgres": pg}
            if "error" in py and "error" in go:
                errors_both += 1
            elif same:
                verdicts += 1
                coords_n += len(py["coordinates"])
            if not same or go.get("fatal"):
                diffs += 1
                if shown < a.show:
                    shown += 1
                    print(f"--- case {i} differs ({test_path})")
                    print(open(test_path).read())
                    print("record:", repr(open(rec_path, encoding="utf-8", newline="").read())[:600])
                    print("python:", json.dumps(py)[:1500])
                    print("go:    ", json.dumps(go)[:1500])
    finally:
        shutil.rmtree(tmp)
        shutil.rmtree(DIR)
    backends = "SQLite and Postgres" if a.postgres else "SQLite"
    print(f"state {a.state} (evaluate_gate executing_suite={EXECUTING}; {backends}): {a.cases} cases, {verdicts} verdicts alike "
          f"({coords_n} coordinates), {errors_both} no-verdict alike, {diffs} differ")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
