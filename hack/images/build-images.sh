#!/usr/bin/env bash
# Builds the stand-in container images for the offline engine into one OCI layout,
# $MILES_CI_CACHE/images/oci, with these tags (served by hack/registry as the names
# on the right):
#   miles-dev   radixark/miles:dev                   CUDA stage image
#   rocm        rocm/sgl-dev:miles-rocm720-mi35x     ROCm stage image
#   python-3.11 python:3.11                          CPU stage image
# Layers: a Debian bookworm rootfs (debootstrap) + a common layer (offline pip setup
# and stand-in wheels) + one layer per image (GPU tool and Ray CLI stand-ins and git checkouts,
# protoc and rustc stand-ins for ROCm; uv and helm stand-ins, the dependency origins
# and a gitconfig that serves their GitHub URLs from them for the CPU image).
# Skips the build when its inputs are unchanged.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${MILES_CI_CACHE:=$HOME/.cache/miles-ci}"
out=$MILES_CI_CACHE/images
layout=$out/oci
rootfs=$out/rootfs-bookworm
packages=python3,python3-pip,python3-venv,python3-setuptools,python3-pytest,python-is-python3,python3-setuptools-whl,python3-wheel-whl,git,ca-certificates,procps

patch=$here/../../testdata/miles/docker/amd_patch/latest/megatron.patch
inputs=$(cat "$0" $(find "$here" -type f ! -name '*.pyc' | sort) "$patch" | sha256sum | cut -c1-16)
if [[ -f $out/.built-$inputs && -f $layout/index.json ]]; then
	echo "build-images: images up to date in $layout"
	exit 0
fi
mkdir -p "$out"

# 1. Debian rootfs, cached on its own (it is the slow step).
if [[ ! -f $rootfs/.done-$(echo "$packages" | sha256sum | cut -c1-8) ]]; then
	mirror=$(grep -rhoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -n1 | tr -d ' ' || true)
	mirror=${mirror:-http://deb.debian.org/debian}
	echo "build-images: debootstrap bookworm from $mirror (~1 min)"
	rm -rf "$rootfs"
	debootstrap --variant=minbase --include="$packages" bookworm "$rootfs" "$mirror" >"$out/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$out/debootstrap.log"; exit 1; }
	rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
	touch "$rootfs/.done-$(echo "$packages" | sha256sum | cut -c1-8)"
fi

work=$(mktemp -d "$out/work.XXXX")
trap 'rm -rf "$work"' EXIT
rm -rf "$layout"
umoci init --layout "$layout"
umoci new --image "$layout:base"
umoci config --image "$layout:base" --author miles-ci \
	--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	--config.env LANG=C.UTF-8 --config.cmd /bin/bash --config.workingdir /
echo "build-images: base layer"
umoci insert --image "$layout:base" --opaque "$rootfs" /
umoci config --image "$layout:base" --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# 2. Common layer: pip serves only from /opt/wheels (stand-in wheels + Debian's
#    setuptools and wheel for build isolation).
common=$work/common
mkdir -p "$common/opt/wheels" "$common/etc"
python3 "$here/mkwheels.py" "$common/opt/wheels" >/dev/null
cp "$rootfs"/usr/share/python-wheels/setuptools-*.whl "$rootfs"/usr/share/python-wheels/wheel-*.whl "$common/opt/wheels/"
cp "$here/files/pip.conf" "$common/etc/pip.conf"
umoci insert --image "$layout:base" "$common" /
umoci config --image "$layout:base" \
	--config.env PIP_NO_INDEX=1 --config.env PIP_FIND_LINKS=/opt/wheels \
	--config.env PIP_BREAK_SYSTEM_PACKAGES=1 --config.env PIP_DISABLE_PIP_VERSION_CHECK=1

# 3. GPU images: SGLang and Megatron-LM checkouts with their bare origins.
repos=$work/repos
bash "$here/mkrepos.sh" "$repos"
for img in miles-dev:nvidia-smi rocm:rocm-smi; do
	tag=${img%%:*} tool=${img#*:}
	umoci tag --image "$layout:base" "$tag"
	layer=$work/$tag
	mkdir -p "$layer/usr/local/bin"
	cp -a "$repos/." "$layer/"
	cp "$here/files/bin/$tool" "$here/files/bin/ray" "$layer/usr/local/bin/"
	if [[ $tag == rocm ]]; then cp "$here/files/bin/protoc" "$here/files/bin/rustc" "$layer/usr/local/bin/"; fi
	echo "build-images: $tag layer"
	umoci insert --image "$layout:$tag" "$layer" /
done
umoci config --image "$layout:rocm" --config.env MILES_HARDWARE_PLATFORM=rocm

# 4. CPU image: python 3.11 with uv and helm stand-ins, and the dependency origins
#    behind their GitHub URLs.
umoci tag --image "$layout:base" python-3.11
layer=$work/python
mkdir -p "$layer/usr/local/bin" "$layer/opt/git" "$layer/etc"
cp "$here/files/bin/uv" "$here/files/bin/helm" "$layer/usr/local/bin/"
cp -a "$repos/opt/git/." "$layer/opt/git/"
cp "$here/files/gitconfig-python" "$layer/etc/gitconfig"
umoci insert --image "$layout:python-3.11" "$layer" /
umoci gc --layout "$layout"
rm -f "$out"/.built-*
touch "$out/.built-$inputs"
echo "build-images: done: $(du -sh "$layout" | cut -f1) in $layout"
