"""miles-ci's driver for a Miles checkout's own tests/ci code.

Written for miles-ci (it is not Miles' code). `miles-ci --planner checkout`
and `miles-ci verify` run it with the checkout as the working folder, to ask
the checkout's own `run_suite.py --list-only`, `python -m tests.ci.ci_policy`
and `python -m tests.ci.file_run` many questions in one process instead of
one interpreter start (and one parse of every test file) per question.

Each case runs the checkout's entry point exactly as its workflow does: a
script with `sys.argv` set and `__name__ == "__main__"` (run_suite.py), or a
module run as `python -m` with the environment the workflow step sets
(ci_policy, file_run). The one shortcut: each test file's registrations are
parsed once (ci_register.ut_parse_one_file is memoised, errors included),
which changes no answer since parsing a file depends on its text alone.

Input (stdin, JSON): {"root": DIR, "tmp": DIR, "cases": [CASE, ...]} with
CASE = {"script": PATH, "argv": [...]} | {"module": NAME, "env": {...}} |
{"registry": true}; a case with "changed_files_env": VAR gets VAR set to a
fresh file holding its base64 "diff" (no file without one). Output (stdout): one JSON object per case and line:
{"exit": N, "stdout": S, "stderr": S, "github_output": S} (a registry case
adds "registrations").
"""

import base64
import contextlib
import copy
import io
import json
import os
import runpy
import sys
import traceback
import warnings

if sys.version_info < (3, 10):
    sys.stdout.write(json.dumps({"python_too_old": "%d.%d.%d" % sys.version_info[:3]}) + "\n")
    sys.exit(3)


def _memoise(module):
    parse = getattr(module, "ut_parse_one_file", None)
    if parse is None or getattr(parse, "_miles_ci_memo", False):
        return
    cache = {}

    def memo(filename, *args, **kwargs):
        key = (filename, args, tuple(sorted(kwargs.items())))
        if key not in cache:
            try:
                cache[key] = (True, parse(filename, *args, **kwargs))
            except Exception as exc:  # the same error, every time it is asked
                cache[key] = (False, exc)
        ok, value = cache[key]
        if not ok:
            raise value
        return copy.deepcopy(value)

    memo._miles_ci_memo = True
    module.ut_parse_one_file = memo


def _memoise_loaded():
    for name in ("tests.ci.ci_register", "ci_register"):
        module = sys.modules.get(name)
        if module is not None:
            _memoise(module)


def _reset_warnings():
    # One CLI call prints each warning once; so does each case here.
    for module in list(sys.modules.values()):
        registry = getattr(module, "__warningregistry__", None)
        if isinstance(registry, dict):
            registry.clear()
    warnings.resetwarnings()


def _registrations():
    from tests.ci.ci_register import collect_tests, discover_ci_files

    _memoise_loaded()
    out = []
    for r in collect_tests(discover_ci_files(), sanity_check=True):
        row = {}
        for key, value in vars(r).items():
            if hasattr(value, "name") and not isinstance(value, (str, int, float, bool, list)):
                value = value.name  # an enum such as HWBackend.CUDA
            row[key] = value
        out.append(row)
    return out


def run_case(root, tmp, index, case, base_path, base_env):
    os.chdir(root)
    sys.path[:] = [root] + base_path
    os.environ.clear()
    os.environ.update(base_env)
    output_path = os.path.join(tmp, "github-output-%d" % index)
    with open(output_path, "w", encoding="utf-8"):
        pass
    os.environ["GITHUB_OUTPUT"] = output_path
    for key, value in case.get("env", {}).items():
        os.environ[key] = value
    if case.get("changed_files_env"):
        # The workflow always sets the path; the file exists only when its
        # git diff succeeded.
        diff_path = os.path.join(tmp, "changed-files-%d.z" % index)
        if "diff" in case:
            with open(diff_path, "wb") as f:
                f.write(base64.b64decode(case["diff"]))
        os.environ[case["changed_files_env"]] = diff_path
    _reset_warnings()
    _memoise_loaded()
    stdout, stderr = io.StringIO(), io.StringIO()
    answer = {"exit": 0}
    saved_argv = sys.argv
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            if "script" in case:
                script = case["script"]
                sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
                sys.argv = [script] + case.get("argv", [])
                runpy.run_path(script, run_name="__main__")
            elif "module" in case:
                sys.argv = [case["module"]] + case.get("argv", [])
                runpy.run_module(case["module"], run_name="__main__", alter_sys=True)
            elif case.get("registry"):
                answer["registrations"] = _registrations()
        except SystemExit as exc:
            code = exc.code
            if code is None:
                code = 0
            elif not isinstance(code, int):
                print(code, file=sys.stderr)
                code = 1
            answer["exit"] = code
        except BaseException:  # noqa: BLE001 - an uncaught error is the CLI's exit 1
            traceback.print_exc()
            answer["exit"] = 1
        finally:
            sys.argv = saved_argv
            sys.stdout.flush()
    _memoise_loaded()
    with open(output_path, encoding="utf-8", errors="replace") as f:
        answer["github_output"] = f.read()
    os.remove(output_path)
    answer["stdout"] = stdout.getvalue()
    answer["stderr"] = stderr.getvalue()
    return answer


def main():
    request = json.load(sys.stdin)
    root, tmp = request["root"], request["tmp"]
    here = os.path.dirname(os.path.abspath(__file__))
    base_path = [p for p in sys.path if p and os.path.abspath(p) != here]
    base_env = dict(os.environ)
    # Answers go to the original stdout; anything else that writes to file
    # descriptor 1 (a subprocess, os.write) lands on stderr instead.
    real_stdout = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    for index, case in enumerate(request["cases"]):
        answer = run_case(root, tmp, index, case, base_path, base_env)
        real_stdout.write(json.dumps(answer) + "\n")
        real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
