#!/usr/bin/env python3
"""Writes tiny stand-in wheels for the packages the Miles CI stage steps install.

The real packages are large native builds fetched from PyPI; the test images have
no index to reach, so `pip install NAME` is served from a local wheel directory.
Each stand-in wheel is pure Python, carries the requested version, and imports as
the real top-level module with a `__version__` and a `MILES_CI_STANDIN = True` flag.

usage: mkwheels.py OUTDIR
"""
import base64
import hashlib
import os
import sys
import zipfile

# name, version, top-level module
WHEELS = [
    ("polars", "1.31.0", "polars"),
    ("zstandard", "0.23.0", "zstandard"),
    ("xxhash", "3.5.0", "xxhash"),
    ("blake3", "1.0.5", "blake3"),
    ("numba", "0.65.1", "numba"),
]

# Fixed timestamp so the wheels are byte-for-byte reproducible.
DATE = (2024, 1, 1, 0, 0, 0)


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def write_wheel(outdir, name, version, module):
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": (
            f'"""Stand-in for {name} {version}, built by miles-ci hack/images/mkwheels.py."""\n'
            f'__version__ = "{version}"\nMILES_CI_STANDIN = True\n'
        ).encode(),
        f"{dist}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            f"Summary: miles-ci offline stand-in for {name}\n"
        ).encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: miles-ci\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/top_level.txt": f"{module}\n".encode(),
    }
    lines = [record_line(p, d) for p, d in files.items()] + [f"{dist}/RECORD,,"]
    files[f"{dist}/RECORD"] = ("\n".join(lines) + "\n").encode()
    path = os.path.join(outdir, f"{name}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            info = zipfile.ZipInfo(p, DATE)
            info.external_attr = 0o644 << 16
            z.writestr(info, d)
    return path


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name, version, module in WHEELS:
        print(write_wheel(outdir, name, version, module))


if __name__ == "__main__":
    main()
