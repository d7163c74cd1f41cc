#!/usr/bin/env bash
# Regenerates the Dagger module's bindings (dagger develop) in a scratch copy of the
# repository and fails when they differ from the committed ones. The committed
# bindings let `go build ./...` and `go vet ./...` work without an engine.
# Starts the hermetic engine if needed (hack/engine/engine.sh).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
engine=$repo/hack/engine/engine.sh
bash "$engine" start
eval "$(bash "$engine" env)"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Tracked and untracked-but-not-ignored files: the tree as it would be committed.
(cd "$repo" && git ls-files -co --exclude-standard -z) | (cd "$repo" && xargs -0 cp --parents -t "$scratch")
(cd "$scratch" && bash "$engine" run dagger develop --progress=plain >/dev/null 2>"$scratch.log") ||
	{ tail -n 30 "$scratch.log"; rm -f "$scratch.log"; echo "check-generated: dagger develop failed" >&2; exit 1; }
rm -f "$scratch.log"

status=0
for f in dagger.gen.go go.mod go.sum $(cd "$scratch" && find internal/dagger internal/querybuilder internal/telemetry -type f 2>/dev/null | sort); do
	if ! cmp -s "$repo/$f" "$scratch/$f"; then
		echo "check-generated: $f is stale; run 'dagger develop' (with: eval \"\$(hack/engine/engine.sh env)\")" >&2
		diff -u "$repo/$f" "$scratch/$f" 2>/dev/null | head -n 20 >&2 || true
		status=1
	fi
done
((status == 0)) && echo "check-generated: generated bindings are up to date"
exit $status
