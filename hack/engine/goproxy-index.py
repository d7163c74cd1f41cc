#!/usr/bin/env python3
"""Makes a Go module download cache usable as a file:// GOPROXY with no network.

`go mod download` stores .info/.mod/.zip files but not always the `list` and
`@latest` answers that `go get MODULE` (no version) asks a proxy for. This writes,
for every module under CACHE (a GOMODCACHE/cache/download folder):
  @v/list   the tagged versions present with their zip
  @latest   the newest version present with its zip, when only pseudo-versions are (for
            modules such as github.com/dagger/otel-go that have no tags)
and aliases ALIAS=MODULE@REV:VERSION pairs, e.g. the commit the Dagger engine
asks for with `go get dagger.io/dagger@<commit>`.

usage: goproxy-index.py CACHE [MODULE@REV=VERSION ...]
"""
import json
import os
import re
import sys

PSEUDO = re.compile(r"(^|[.-])(0\.)?\d{14}-[0-9a-f]{12}(\+incompatible)?$")


def semkey(v):
    core = v.lstrip("v").split("+")[0]
    main, _, pre = core.partition("-")
    nums = [int(x) if x.isdigit() else 0 for x in main.split(".")]
    return (nums, pre == "", pre)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cache = sys.argv[1]
    for root, dirs, files in os.walk(cache):
        if os.path.basename(root) != "@v":
            continue
        # Only versions whose zip is present: a query for the latest version must
        # never pick one that is there only for module-graph loading (.mod alone).
        versions = [
            f[:-5] for f in files
            if f.endswith(".info") and f[:-5] + ".mod" in files and f[:-5] + ".zip" in files
        ]
        if not versions:
            continue
        tagged = sorted((v for v in versions if not PSEUDO.search(v)), key=semkey)
        with open(os.path.join(root, "list"), "w") as f:
            f.write("".join(v + "\n" for v in tagged))
        newest = max(versions, key=semkey) if not tagged else tagged[-1]
        with open(os.path.join(root, newest + ".info")) as src, open(
            os.path.join(os.path.dirname(root), "@latest"), "w"
        ) as dst:
            dst.write(src.read())
    for alias in sys.argv[2:]:
        modrev, version = alias.split("=")
        mod, rev = modrev.rsplit("@", 1)
        vdir = os.path.join(cache, escape(mod), "@v")
        with open(os.path.join(vdir, version + ".info")) as f:
            info = json.load(f)
        with open(os.path.join(vdir, rev + ".info"), "w") as f:
            json.dump(info, f)


def escape(path):
    """Go's module path escaping: upper-case letters become !lower-case."""
    return "".join("!" + c.lower() if c.isupper() else c for c in path)


if __name__ == "__main__":
    main()
