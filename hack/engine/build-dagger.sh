#!/usr/bin/env bash
# Builds the Dagger v0.21.8 CLI, engine and helpers from the Go module proxy into
# $MILES_CI_CACHE/bin, with the project's stand-ins for the modules the proxy refuses.
# Called by engine.sh build; safe to run again (skips what is already built).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${MILES_CI_CACHE:=$HOME/.cache/miles-ci}"
version=v0.21.8
src=$MILES_CI_CACHE/src/dagger-$version
bin=$MILES_CI_CACHE/bin
standins=$here/standins
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false"

stamp=$bin/.dagger-$version-$(cat "$here/build-dagger.sh" $(find "$standins" -type f | sort) | sha256sum | cut -c1-16)
if [[ -f $stamp ]]; then
	echo "build-dagger: binaries up to date in $bin"
	exit 0
fi

mkdir -p "$MILES_CI_CACHE/src" "$bin"
if [[ ! -f $src/.prepared ]]; then
	echo "build-dagger: preparing source tree $src"
	go mod download github.com/dagger/dagger@$version dagger.io/dagger@$version
	rm -rf "$src"
	cp -r "$(go env GOMODCACHE)/github.com/dagger/dagger@$version" "$src"
	chmod -R u+w "$src"
	# Nested modules missing from the proxy's zip: the Go SDK and distconsts.
	rm -rf "$src/sdk/go"
	cp -r "$(go env GOMODCACHE)/dagger.io/dagger@$version" "$src/sdk/go"
	chmod -R u+w "$src/sdk/go"
	touch "$src/.prepared"
fi
# Stand-ins are refreshed on every build so edits to them take effect.
rm -rf "$src/engine/distconsts" "$src/.standins"
cp -r "$standins/distconsts" "$src/engine/distconsts"
cp -r "$standins" "$src/.standins"
# Dang modules are served by the v1 implementation: v2 is not on the proxy.
sed -i -e '/dangv2 "github.com\/dagger\/dagger\/core\/sdk\/dang\/v2"/d' \
	-e 's/return dangv2.Impl{}/return dangv1.Impl{}/' "$src/core/sdk/dang_sdk.go"
rm -rf "$src/core/sdk/dang/v2"
(
	cd "$src"
	go mod edit \
		-replace github.com/vito/midterm=./.standins/midterm \
		-replace github.com/vito/tuist=./.standins/tuist \
		-replace github.com/vito/tuist/teav1=./.standins/tuist/teav1 \
		-replace github.com/vito/bubbline=./.standins/bubbline \
		-replace github.com/vito/dang/v2=./.standins/dang
	ldflags="-s -w -X github.com/dagger/dagger/engine.Version=$version -X github.com/dagger/dagger/engine.Tag=$version"
	echo "build-dagger: building (cold: ~4 min on 2 cores)"
	go build -tags dfexcludepatterns,dfparents -trimpath -ldflags "$ldflags" -o "$bin/" \
		./cmd/dagger ./cmd/engine ./cmd/dnsname ./cmd/dialstdio ./cmd/codegen
	# dagger-init is bind-mounted into containers of any distribution: link it statically.
	CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/dagger-init" ./cmd/init
)
rm -f "$bin"/.dagger-$version-*
touch "$stamp"
echo "build-dagger: done"
