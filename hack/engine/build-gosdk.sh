#!/usr/bin/env bash
# Assembles the Go SDK runtime image that `dagger call` on a Go module needs (normally
# pulled from a registry) as an OCI layout at $MILES_CI_CACHE/gosdk/oci, and writes its
# manifest digest to $MILES_CI_CACHE/gosdk/digest. The engine reads it as its built-in
# content (DAGGER_GO_SDK_MANIFEST_DIGEST). Contents: the Debian rootfs, this machine's
# Go toolchain, Dagger's codegen, and a module download cache holding every module
# that the generated code, the SDK and this repository's go.mod need, served offline as
# GOPROXY=file:///go/pkg/mod/cache/download. Rebuilt when go.mod/go.sum change.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
: "${MILES_CI_CACHE:=$HOME/.cache/miles-ci}"
out=$MILES_CI_CACHE/gosdk
layout=$out/oci
rootfs=$MILES_CI_CACHE/images/rootfs-bookworm
goroot=$(go env GOROOT)
version=v0.21.8
# The commit the engine asks for with `go get dagger.io/dagger@<commit>` (core/sdk/go_sdk.go).
libcommit=$(sed -n 's/^\s*goSDKLibVersion\s*=\s*"\([0-9a-f]*\)".*/\1/p' \
	"$MILES_CI_CACHE/src/dagger-$version/core/sdk/go_sdk.go")
[[ -n $libcommit ]] || { echo "build-gosdk: goSDKLibVersion not found; run build-dagger.sh first" >&2; exit 1; }

inputs=$(cat "$0" "$here/goproxy-index.py" "$repo/go.mod" "$repo/go.sum" "$MILES_CI_CACHE/bin/codegen" 2>/dev/null |
	sha256sum | cut -c1-16)-$(go version | tr ' /' __)
if [[ -f $out/.built-$inputs && -f $out/digest ]]; then
	echo "build-gosdk: Go SDK image up to date ($(cat "$out/digest"))"
	exit 0
fi
echo "build-gosdk: assembling the Go SDK image"
mkdir -p "$out"
work=$(mktemp -d "$out/work.XXXX")
trap 'rm -rf "$work"' EXIT

# Module cache: download through the host's cache first, then the proxy.
stage=$work/gomodcache
hostcache=$(go env GOMODCACHE)
export GOPROXY="file://$hostcache/cache/download,$(go env GOPROXY)"
export GOMODCACHE=$stage GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$work/m"
cp "$hostcache/dagger.io/dagger@$version/go.mod" "$work/m/go.mod"
(
	cd "$work/m"
	# The module graph of generated code: the SDK plus what codegen adds with `go get`.
	# Both the graph right after `go get dagger.io/dagger` and the one after codegen
	# adds its imports are tidied, so both build lists must be present.
	go mod edit -module example.com/gosdkcache -require dagger.io/dagger@$version
	go mod download all
	go get dagger.io/dagger@$version github.com/dagger/querybuilder@latest github.com/dagger/otel-go@latest
	go mod download all
	# Codegen's first tidy (before the replace block is copied) selects the v0.17.0
	# log modules that github.com/dagger/otel-go requires.
	go mod download go.opentelemetry.io/otel/sdk/log/logtest@v0.16.0 \
		go.opentelemetry.io/otel/log@v0.17.0 go.opentelemetry.io/otel/sdk/log@v0.17.0 \
		go.opentelemetry.io/otel/sdk/log/logtest@v0.17.0 \
		go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc@v0.17.0 \
		go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp@v0.17.0
)
# A module shaped like the generated code, tidied as codegen tidies it: first as is,
# then with the SDK's replace block (codegen's second pass copies it).
mkdir -p "$work/gen"
cat >"$work/gen/imports.go" <<'GO'
package main

import (
	_ "dagger.io/dagger"
	_ "github.com/Khan/genqlient/graphql"
	_ "github.com/dagger/otel-go"
	_ "github.com/dagger/querybuilder"
	_ "github.com/vektah/gqlparser/v2/gqlerror"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/propagation"
	_ "go.opentelemetry.io/otel/sdk/resource"
	_ "go.opentelemetry.io/otel/semconv/v1.40.0"
	_ "go.opentelemetry.io/otel/trace"
)

func main() {}
GO
(
	cd "$work/gen"
	printf 'module example.com/gen\n\ngo 1.26\n' >go.mod
	go get dagger.io/dagger@$version
	go mod tidy
	sed -n '/^replace (/,/^)/p' "$hostcache/dagger.io/dagger@$version/go.mod" >>go.mod
	go mod tidy
)
# This repository's build list, from a copy of go.mod/go.sum (left untouched).
mkdir -p "$work/repo"
cp "$repo/go.mod" "$repo/go.sum" "$work/repo/"
(cd "$work/repo" && go mod download all)
python3 "$here/goproxy-index.py" "$stage/cache/download" "dagger.io/dagger@$libcommit=$version"

layer=$work/layer
mkdir -p "$layer/go/pkg/mod/cache" "$layer/usr/local" "$layer/root/.cache/go-build" "$layer/go/bin"
cp -a "$stage/cache/download" "$layer/go/pkg/mod/cache/download"
cp -a "$goroot" "$layer/usr/local/go"
rm -rf "$layer/usr/local/go/pkg/obj" "$layer/usr/local/go/test"
mkdir -p "$layer/usr/local/bin"
cp "$MILES_CI_CACHE/bin/codegen" "$layer/usr/local/bin/codegen"

rm -rf "$layout"
umoci init --layout "$layout"
umoci new --image "$layout:gosdk"
umoci insert --image "$layout:gosdk" --opaque "$rootfs" /
umoci insert --image "$layout:gosdk" "$layer" /
umoci config --image "$layout:gosdk" --author miles-ci \
	--config.env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	--config.env GOPATH=/go --config.env GOPROXY=file:///go/pkg/mod/cache/download \
	--config.env GOSUMDB=off --config.env GOTOOLCHAIN=local --config.env CGO_ENABLED=0 \
	--config.workingdir /
umoci gc --layout "$layout"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' \
	"$layout/index.json" >"$out/digest"
rm -f "$out"/.built-*
touch "$out/.built-$inputs"
echo "build-gosdk: done: $(cat "$out/digest"), $(du -sh "$layout" | cut -f1)"
