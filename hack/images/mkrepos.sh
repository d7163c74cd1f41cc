#!/usr/bin/env bash
# Writes the git checkouts baked into the GPU test images under ROOT:
#   ROOT/sgl-workspace/sglang     checkout of branch sglang-miles, origin /opt/git/sglang.git
#   ROOT/root/Megatron-LM         checkout of branch miles-main,   origin /opt/git/Megatron-LM.git
#   ROOT/opt/git/*.git            bare "origin" repositories with branches, tags and
#                                 refs/pull/N/head, so `git fetch origin REF` works offline
#   ROOT/opt/miles-ci/megatron.patch   the stand-in ROCm patch
#                                 (testdata/miles/docker/amd_patch/latest/megatron.patch)
# Commits use fixed authors and dates, so every build yields the same commit ids.
# The origins serve any commit by id (uploadpack.allowAnySHA1InWant), as GitHub
# serves reachable ones, so `git fetch origin <commit>` works as it does there.
#
# Megatron-LM branches and the ROCm patch:
#   miles-main, main, release-0.14  the patch applies cleanly
#   rocm-patched                    the patch is already applied (reverse check passes)
#   rocm-conflict                   the patched line differs: neither check passes
# usage: mkrepos.sh ROOT
set -euo pipefail

root=${1:?usage: mkrepos.sh ROOT}
here=$(cd "$(dirname "$0")" && pwd)
patch=$(cd "$here/../.." && pwd)/testdata/miles/docker/amd_patch/latest/megatron.patch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export GIT_AUTHOR_NAME="Miles CI" GIT_AUTHOR_EMAIL="ci@miles.invalid"
export GIT_COMMITTER_NAME="Miles CI" GIT_COMMITTER_EMAIL="ci@miles.invalid"
export GIT_CONFIG_NOSYSTEM=1 HOME=$work
git config --global init.defaultBranch main
git config --global advice.detachedHead false
tick=1700000000
commit() { # commit MESSAGE: commit everything at the next fixed timestamp
	tick=$((tick + 3600))
	export GIT_AUTHOR_DATE="@$tick +0000" GIT_COMMITTER_DATE="@$tick +0000"
	git add -A
	git commit -q -m "$1"
}

# --- SGLang -------------------------------------------------------------------
s=$work/sglang
mkdir -p "$s/python/sglang"
cd "$s"
git init -q
cat > python/pyproject.toml <<'TOML'
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "sglang"
version = "0.5.0"
description = "miles-ci stand-in for SGLang"

[tool.setuptools]
packages = ["sglang"]
TOML
printf '"""miles-ci stand-in for SGLang."""\n\n__version__ = "0.5.0"\n' > python/sglang/__init__.py
printf '# SGLang (miles-ci stand-in)\n' > README.md
commit "Initial SGLang stand-in"
git tag v0.5.0
git branch release-0.5
printf 'def launch_server():\n    return "sglang stand-in server"\n' > python/sglang/launch_server.py
commit "Add launch_server"
git checkout -q -b sglang-miles
printf '\nMILES_BRANCH = "sglang-miles"\n' >> python/sglang/__init__.py
commit "Miles integration branch"
git tag v0.5.0-miles
git checkout -q -b pr-1234 main
printf 'def feature_1234():\n    return 1234\n' > python/sglang/feature_1234.py
commit "PR 1234: add feature_1234"
git checkout -q sglang-miles
git init -q --bare "$work/sglang.git"
git push -q "$work/sglang.git" main sglang-miles release-0.5 'refs/tags/*:refs/tags/*' pr-1234:refs/pull/1234/head
git push -q "$work/sglang.git" sglang-miles:refs/pull/1235/head
git -C "$work/sglang.git" config uploadpack.allowAnySHA1InWant true

# --- Megatron-LM --------------------------------------------------------------
m=$work/Megatron-LM
mkdir -p "$m/megatron/core" "$m/megatron/training"
cd "$m"
git init -q
cat > pyproject.toml <<'TOML'
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "megatron-core"
version = "0.14.0"
description = "miles-ci stand-in for Megatron-LM"

[tool.setuptools]
packages = ["megatron", "megatron.core", "megatron.training"]
TOML
printf '"""miles-ci stand-in for Megatron-LM."""\n' > megatron/__init__.py
cat > megatron/core/__init__.py <<'PY'
"""miles-ci stand-in for Megatron Core."""

__version__ = "0.14.0"

# Hardware back ends this build supports.
BACKENDS = ["cuda"]
PY
printf '"""miles-ci stand-in for megatron.training."""\n\n\ndef pretrain():\n    return "megatron stand-in"\n' > megatron/training/__init__.py
printf '# Megatron-LM (miles-ci stand-in)\n' > README.md
commit "Initial Megatron-LM stand-in"
git tag core_v0.14.0
git branch release-0.14
git checkout -q -b miles-main
printf 'MILES = True\n' > megatron/training/miles.py
commit "Miles integration branch"
git checkout -q -b rocm-patched
git apply "$patch"
commit "Apply the ROCm compatibility patch"
git checkout -q -b rocm-conflict miles-main
sed -i 's/^BACKENDS = \["cuda"\]$/BACKENDS = ["cuda", "xpu"]/' megatron/core/__init__.py
commit "Add the xpu back end (conflicts with the ROCm patch)"
git checkout -q -b pr-101 miles-main
printf 'def feature_101():\n    return 101\n' > megatron/training/feature_101.py
commit "PR 101: add feature_101"
git checkout -q miles-main
git init -q --bare "$work/Megatron-LM.git"
git push -q "$work/Megatron-LM.git" main miles-main release-0.14 rocm-patched rocm-conflict \
	'refs/tags/*:refs/tags/*' pr-101:refs/pull/101/head rocm-conflict:refs/pull/102/head
git -C "$work/Megatron-LM.git" config uploadpack.allowAnySHA1InWant true

# --- Lay out under ROOT ---------------------------------------------------------
mkdir -p "$root/opt/git" "$root/sgl-workspace" "$root/root" "$root/opt/miles-ci"
rm -rf "$root/opt/git/sglang.git" "$root/opt/git/Megatron-LM.git" "$root/sgl-workspace/sglang" "$root/root/Megatron-LM"
mv "$work/sglang.git" "$work/Megatron-LM.git" "$root/opt/git/"
git clone -q --no-hardlinks -b sglang-miles "$root/opt/git/sglang.git" "$root/sgl-workspace/sglang"
git -C "$root/sgl-workspace/sglang" remote set-url origin /opt/git/sglang.git
git clone -q --no-hardlinks -b miles-main "$root/opt/git/Megatron-LM.git" "$root/root/Megatron-LM"
git -C "$root/root/Megatron-LM" remote set-url origin /opt/git/Megatron-LM.git
cp "$patch" "$root/opt/miles-ci/megatron.patch"
