import hashlib, json, os, re, resource, select, signal, stat, subprocess, sys, tempfile, time

RECORD = "miles-ci-run-record "
STATUS = re.compile(rb"\[[0-9]+/[0-9]+\] .+  (PASS|FAIL|TIMEOUT)  elapsed=[0-9]+s")
OPEN = re.compile(rb"\[[0-9]+/[0-9]+\] ")
MAX_STATUS, MAX_LINE, PER_FILE = 4096, 1024, 8
PLAN_ENV = "MILES_CI_PLAN"
PYTEST_ENV, CHANNEL_ENV = "MILES_CI_PYTEST", "MILES_CI_PYTEST_CHANNEL"
MAX_CHANNEL, MAX_FILES, MAX_SESSIONS = 16 << 20, 10000, 64
# The metric gate's records (rules §16): the harness merges a passing
# attempt's records into BASE/KEY/attempt-N.merged.jsonl before it prints the
# file's PASS line; the wrapper keeps that record then, before the next file
# runs, as Miles' gate reads it then.
GATE_ENV, MAX_GATE, MAX_GATE_TOTAL = "MILES_CI_GATE_RECORD_DIR", 1 << 20, 4 << 20
PASSED = re.compile(rb"PASS  elapsed=[0-9]+s")
RETRY_OF = re.compile(rb" retry_of=attempt=([0-9]+)$")

# PLUGIN is miles-ci's pytest plugin (-p miles_ci_pytest): it reports each
# test's outcome and the session's exit status through a FIFO only the
# wrapper reads, outside /results, as they happen; what a test does later
# (an atexit hook, os._exit, a forged junit.xml) cannot take a report back.
PLUGIN = r"""
import json, os
_fd = os.open(os.environ.pop("MILES_CI_PYTEST_CHANNEL"), os.O_WRONLY)
_root = None

def _send(ev):
    try:
        os.write(_fd, (json.dumps(ev) + "\n").encode())
    except OSError:
        pass

def _file(nodeid):
    path = nodeid.split("::")[0]
    if _root is not None:
        path = os.path.relpath(os.path.join(_root, path), os.getcwd())
    return path[:512]

def pytest_configure(config):
    global _root
    _root = str(getattr(config, "rootpath", None) or config.rootdir)
    _send({"e": "start"})

def pytest_collectreport(report):
    if report.failed:
        _send({"e": "test", "file": _file(report.nodeid), "outcome": "failed"})

def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        _send({"e": "test", "file": _file(report.nodeid), "outcome": report.outcome})

def pytest_sessionfinish(session, exitstatus):
    _send({"e": "finish", "exitstatus": int(exitstatus)})
"""
LIMITS = {"-l": (resource.RLIMIT_MEMLOCK, 1024), "-s": (resource.RLIMIT_STACK, 1024), "-n": (resource.RLIMIT_NOFILE, 1)}

def write(fd, data):
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BrokenPipeError:
            return
        view = view[n:]

def shown(limit, unit):
    return "unlimited" if limit == resource.RLIM_INFINITY else str(limit // unit)

def raise_limit(flag, value, warnings):
    res, unit = LIMITS.get(flag, (resource.RLIMIT_CORE, 1024))
    try:
        want = resource.RLIM_INFINITY if value == "unlimited" else int(value) * unit
        if flag not in LIMITS:
            raise ValueError(flag)
        resource.setrlimit(res, (want, want))
    except (ValueError, OSError):
        warnings.append("::warning::could not raise ulimit %s to %s (needs CAP_SYS_RESOURCE); the engine's limit %s applies"
                        % (flag, value, shown(resource.getrlimit(res)[0], unit)))

def rocm_devices(warnings):
    def node(path, devfile):
        if os.path.exists(path) or not os.access(devfile, os.R_OK):
            return
        try:
            major, minor = open(devfile).read().strip().split(":")
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(int(major), int(minor)))
            os.chmod(path, 0o666)
        except (OSError, ValueError) as e:
            warnings.append("::warning::could not create %s: %s" % (path, e))
    node("/dev/kfd", "/sys/class/kfd/kfd/dev")
    os.makedirs("/dev/dri", exist_ok=True)
    drm = "/sys/class/drm"
    names = sorted(os.listdir(drm)) if os.path.isdir(drm) else []
    for name in names:
        if name.startswith("card") or name.startswith("renderD"):
            node("/dev/dri/" + name, drm + "/" + name + "/dev")

def gate_key(filename):
    # ci_utils._attempt_record_dir's key of a test file.
    return re.sub(r"[^A-Za-z0-9._-]", "_", filename) + "-" + hashlib.sha1(filename.encode()).hexdigest()[:10]

def read_record(base, key, attempt):
    # BASE/KEY/attempt-N.merged.jsonl, no link followed, a regular file of
    # at most MAX_GATE bytes: (text, None), or (None, why not).
    flags, fds = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), []
    try:
        fds.append(os.open(base, flags | os.O_DIRECTORY))
        fds.append(os.open(key, flags | os.O_DIRECTORY, dir_fd=fds[-1]))
        fds.append(os.open("attempt-%d.merged.jsonl" % attempt, flags | os.O_NONBLOCK, dir_fd=fds[-1]))
        st = os.fstat(fds[-1])
        if not stat.S_ISREG(st.st_mode):
            return None, "not a regular file"
        data = b""
        while len(data) <= MAX_GATE:
            chunk = os.read(fds[-1], MAX_GATE + 1 - len(data))
            if not chunk:
                break
            data += chunk
        if len(data) > MAX_GATE:
            return None, "more than the %d bytes miles-ci keeps" % MAX_GATE
        return data.decode("utf-8"), None
    except FileNotFoundError:
        return None, "missing"
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except OSError as e:
        return None, "cannot be read (%s)" % (e.strerror or e)
    finally:
        for fd in fds:
            os.close(fd)

def in_dagger_exec():
    try:
        return open("/proc/1/cmdline", "rb").read().split(b"\0")[0] == b"/.init"
    except OSError:
        return False

def others():
    me = os.getpid()
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, me):
            continue
        try:
            state = open("/proc/%s/stat" % name, "rb").read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            pids.append(int(name))
    return pids

def reap():
    left = len(others())
    for _ in range(50):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if not others():
            break
        time.sleep(0.1)
    return left

def main():
    args = sys.argv[2:]
    warnings, rocm, timeout, grace, cap, do_reap = [], False, 0, 30, 8 << 20, False
    while args and args[0] != "--":
        opt = args.pop(0)
        if opt == "--ulimit":
            flag, value = args.pop(0), args.pop(0)
            raise_limit(flag, value, warnings)
        elif opt == "--rocm-devices":
            rocm = True
        elif opt == "--timeout":
            timeout = int(args.pop(0))
        elif opt == "--kill-after":
            grace = int(args.pop(0))
        elif opt == "--log-cap":
            cap = int(args.pop(0))
        elif opt == "--reap":
            do_reap = True
        else:
            sys.stderr.write("run: unknown option %s\n" % opt)
            os._exit(2)
    cmd = args[1:]
    if rocm:
        rocm_devices(warnings)
    if do_reap and not in_dagger_exec():
        warnings.append("::warning::not stopping leftover processes: this is not a Dagger exec")
        do_reap = False
    try:
        os.makedirs(os.environ.get("MILES_CI_RESULTS", "/results"), exist_ok=True)
    except OSError as e:
        warnings.append("::warning::could not create the results folder: %s" % e)
    head_cap, tail_cap = cap // 2, cap - cap // 2
    head_left, tail, total = head_cap, bytearray(), 0
    status, dropped, line = [], 0, bytearray()
    # With the plan (its files in order), a status line counts only where the
    # runner prints it: "[i/n] FILE_i  " with n the plan's length. Each file
    # keeps its first and last PER_FILE such lines (the runner's own line is
    # last when the test floods before it), so no flood of status-shaped
    # lines, of any file, can push the runner's lines out.
    env = dict(os.environ)
    plan = None
    try:
        plan = json.loads(env.pop(PLAN_ENV)) if PLAN_ENV in env else None
        if not isinstance(plan, list) or not all(isinstance(f, str) for f in plan):
            plan = None
    except ValueError:
        plan = None
    prefixes = []
    if plan is not None:
        for i, f in enumerate(plan, 1):
            name = f.replace("\r", "\\r").replace("\n", "\\n")
            prefixes.append(("[%d/%d] %s  " % (i, len(plan), name)).encode("utf-8", "surrogateescape"))
    first, last, overflow, foreign, seq = {}, {}, {}, 0, 0
    gate_base = env.get(GATE_ENV) if plan is not None else None
    gate, gate_seen, gate_total = [], set(), 0

    def snapshot(i, rest):
        # The first PASS line of a file's attempt keeps that attempt's
        # record; a later line (a test printing one) changes nothing.
        nonlocal gate_total
        if not gate_base or not PASSED.match(rest):
            return
        retry = RETRY_OF.search(rest)
        attempt = int(retry.group(1)) + 1 if retry else 1
        if (i, attempt) in gate_seen:
            return
        gate_seen.add((i, attempt))
        entry = {"file": plan[i], "attempt": attempt, "record": None, "problem": ""}
        text, problem = read_record(gate_base, gate_key(plan[i]), attempt)
        if text is not None and gate_total + len(text) > MAX_GATE_TOTAL:
            text, problem = None, "over the %d bytes miles-ci keeps of all records" % MAX_GATE_TOTAL
        if text is not None:
            gate_total += len(text)
            entry["record"] = text
        else:
            entry["problem"] = problem
        gate.append(entry)
    channel, pytest, pbuf, ptotal = None, None, bytearray(), 0
    if env.pop(PYTEST_ENV, None) == "1":
        try:
            d = tempfile.mkdtemp(prefix="miles-ci-pytest-")
            fifo = os.path.join(d, "channel")
            os.mkfifo(fifo, 0o600)
            channel = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # held: the channel never reads as ended
            with open(os.path.join(d, "miles_ci_pytest.py"), "w") as f:
                f.write(PLUGIN)
            env["PYTHONPATH"] = d + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            env["PYTEST_ADDOPTS"] = (env.get("PYTEST_ADDOPTS", "") + " -p miles_ci_pytest").strip()
            env[CHANNEL_ENV] = fifo
            pytest = {"sessions": 0, "exit_statuses": [], "files": {}, "bad_lines": 0, "overflow": False}
        except OSError as e:
            warnings.append("::warning::could not set up miles-ci's pytest channel: %s" % e)

    def heard(data):
        nonlocal pbuf, ptotal
        ptotal += len(data)
        if ptotal > MAX_CHANNEL:
            pytest["overflow"] = True
            return
        pbuf += data
        *lines, rest = bytes(pbuf).split(b"\n")
        pbuf = bytearray(rest[:8192])
        for raw in lines:
            try:
                ev = json.loads(raw)
                kind = ev["e"]
            except (ValueError, TypeError, KeyError):
                pytest["bad_lines"] += 1
                continue
            if kind == "start":
                pytest["sessions"] += 1
            elif kind == "finish" and isinstance(ev.get("exitstatus"), int) and len(pytest["exit_statuses"]) < MAX_SESSIONS:
                pytest["exit_statuses"].append(ev["exitstatus"])
            elif kind == "test" and isinstance(ev.get("file"), str) and isinstance(ev.get("outcome"), str):
                files = pytest["files"]
                if ev["file"] not in files and len(files) >= MAX_FILES:
                    pytest["overflow"] = True
                    continue
                seen = files.setdefault(ev["file"], {"ran": True, "failed": False})
                seen["failed"] = seen["failed"] or ev["outcome"] == "failed"
            else:
                pytest["bad_lines"] += 1

    def listen():
        while channel is not None:
            try:
                data = os.read(channel, 1 << 16)
            except BlockingIOError:
                return
            if not data:
                return
            heard(data)

    def output(data):
        nonlocal head_left, tail, total
        total += len(data)
        if head_left > 0:
            part = data[:head_left]
            write(1, part)
            head_left -= len(part)
            data = data[len(part):]
        if data:
            tail += data
            if len(tail) > tail_cap:
                del tail[:len(tail) - tail_cap]

    def scan(data):
        nonlocal line
        for chunk in data.splitlines(keepends=True):
            # Only a line's end can hold the runner's status line: a test's
            # unfinished line (no newline) may come before it.
            line += chunk
            if len(line) > 2 * MAX_LINE:
                del line[:len(line) - MAX_LINE]
            if chunk.endswith(b"\n"):
                done(bytes(line).rstrip(b"\r\n"))
                line = bytearray()

    def done(text):
        nonlocal dropped, foreign, seq
        text = text[-MAX_LINE:]
        for start in reversed([m.start() for m in OPEN.finditer(text)]):
            if not STATUS.match(text, start):
                continue
            if plan is None:
                if len(status) < MAX_STATUS:
                    status.append(text[start:].decode("utf-8", "replace"))
                else:
                    dropped += 1
                return
            i = int(text[start + 1:text.index(b"/", start)]) - 1
            if not 0 <= i < len(prefixes) or not text.startswith(prefixes[i], start):
                foreign += 1
                return
            seq += 1
            snapshot(i, text[start + len(prefixes[i]):])
            kept = (seq, text[start:].decode("utf-8", "replace"))
            if len(first.setdefault(i, [])) < PER_FILE:
                first[i].append(kept)
                return
            window = last.setdefault(i, [])
            window.append(kept)
            if len(window) > PER_FILE:
                del window[0]
                overflow[i] = overflow.get(i, 0) + 1
            return

    for w in warnings:
        output((w + "\n").encode())
    start = time.monotonic()
    r, w = os.pipe()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=w, stderr=w, start_new_session=True, env=env)
    except OSError as e:
        os.close(w)
        output(("run: cannot start %s: %s\n" % (cmd[0] if cmd else "(nothing)", e)).encode())
        proc = None
    else:
        os.close(w)
    timed_out, kill_at, runner_done, reaped, leftovers = False, None, proc is None, False, 0
    drain_until = None
    while True:
        now = time.monotonic()
        if not runner_done:
            if proc.poll() is not None:
                runner_done = True
            elif timeout and not timed_out and now - start >= timeout:
                timed_out, kill_at = True, now + grace
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            elif kill_at is not None and now >= kill_at:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                kill_at = now + 3600
        if runner_done and not reaped:
            reaped = True
            if do_reap:
                leftovers = reap()
            # What is left in the pipe is read; a writer that outlived the
            # runner (without --reap) is not waited for long.
            drain_until = now + (5 if do_reap else 1)
        if drain_until is not None and now >= drain_until:
            break
        if r is None:
            if runner_done:
                break
            select.select([channel] if channel is not None else [], [], [], 0.2)
            listen()
            continue
        ready, _, _ = select.select([r] + ([channel] if channel is not None else []), [], [], 0.2)
        if channel in ready:
            listen()
        if r in ready:
            data = os.read(r, 1 << 16)
            if not data:
                # Every writer is gone; the runner may still run (it closed
                # its output), and the timer still applies.
                os.close(r)
                r = None
                continue
            output(data)
            scan(data)
    listen()
    if line:
        done(bytes(line))
    elapsed = time.monotonic() - start
    cut = max(0, total - head_cap - len(tail))
    if cut:
        write(1, ("\n[miles-ci: %d bytes of output cut here; run.log keeps the first %d and the last %d bytes]\n" % (cut, head_cap, len(tail))).encode())
    write(1, bytes(tail))
    if plan is not None:
        status = [t for _, t in sorted([k for i in first for k in first[i]] + [k for i in last for k in last[i]])]
    rec = {"ending": "exited", "exit_code": 127, "signal": 0, "timeout_s": 0, "elapsed_s": round(elapsed, 3),
           "log_bytes": total, "log_cut_bytes": cut, "status_lines": status, "status_dropped": dropped,
           "status_foreign": foreign, "status_overflow": [plan[i] for i in sorted(overflow)],
           "leftovers": leftovers, "warnings": warnings, "pytest": pytest,
           "gate_records": gate}
    if timed_out:
        rec["ending"], rec["timeout_s"] = "timeout", timeout
    elif proc is not None and proc.returncode < 0:
        rec["ending"], rec["signal"] = "signaled", -proc.returncode
    elif proc is not None:
        rec["exit_code"] = proc.returncode
    code = rec["exit_code"] if rec["ending"] == "exited" and not 128 <= rec["exit_code"] <= 191 else 192
    sys.stdout.flush()
    # On a line of its own, whatever a test left unfinished on this stderr.
    write(2, ("\n" + RECORD + json.dumps(rec) + "\n").encode())
    os._exit(code)

main()
