"""Differential oracle: what CPython's own ast module sees in each file.

For every path given on the command line, prints one JSON line: either
{"file", "error": true, "msg", "line"} when ast.parse refuses the source (the
file is read as Miles reads it: open(path).read(), UTF-8, universal
newlines), or {"file", "calls": [...]} with every top-level expression
statement that calls a bare name starting with "register_", its line, and its
arguments classified as the registry parser does (ast node class, and the
literal's type and value).
"""
import ast
import json
import sys


def describe(node):
    if isinstance(node, ast.Constant):
        v = node.value
        t = type(v).__name__
        out = {"node": "Constant", "type": t}
        if isinstance(v, bool):
            out["bool"] = v
        elif isinstance(v, (int, float)):
            try:
                out["num"] = repr(float(v))
            except OverflowError:
                out["overflow"] = True
        elif isinstance(v, str):
            out["str"] = v
        elif isinstance(v, bytes):
            out["str"] = v.decode("latin-1")
        return out
    if isinstance(node, ast.List):
        return {"node": "List", "elems": [describe(e) for e in node.elts]}
    return {"node": type(node).__name__}


def main():
    paths = sys.argv[1:]
    if paths == ["-"]:  # a long list: one path per line on stdin
        paths = [p for p in sys.stdin.read().split("\n") if p]
    for path in paths:
        with open(path, encoding="utf-8", errors="strict") as f:
            try:
                src = f.read()
            except UnicodeDecodeError:
                print(json.dumps({"file": path, "error": True, "msg": "not UTF-8", "line": 0}))
                continue
        try:
            tree = ast.parse(src)
        except SyntaxError as e:
            print(json.dumps({"file": path, "error": True, "msg": e.msg, "line": e.lineno}))
            continue
        except ValueError as e:  # null bytes, before Python 3.11.4
            print(json.dumps({"file": path, "error": True, "msg": str(e), "line": 0}))
            continue
        calls = []
        for stmt in tree.body:
            if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
                continue
            call = stmt.value
            if not isinstance(call.func, ast.Name) or not call.func.id.startswith("register_"):
                continue
            args = []
            for a in call.args:
                if isinstance(a, ast.Starred):
                    args.append({"kind": "starred"})
                else:
                    args.append({"kind": "positional", "value": describe(a)})
            for kw in call.keywords:
                if kw.arg is None:
                    args.append({"kind": "doublestar"})
                else:
                    args.append({"kind": "keyword", "keyword": kw.arg, "value": describe(kw.value)})
            calls.append({"func": call.func.id, "line": call.func.lineno, "args": args})
        print(json.dumps({"file": path, "calls": calls}))


if __name__ == "__main__":
    main()
