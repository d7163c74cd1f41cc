#!/usr/bin/env bash
# Runs `miles-ci run ARGS` (one stage shard in its container) on a Dagger engine and
# prints the results; exits like the suite. The engine is the installed dagger CLI's,
# or, with none installed, the project's own hermetic engine: hack/engine/engine.sh
# builds it the first time (about 30 min on 2 cores with empty Go caches; needs root,
# apt and ~10 GB) and starts it. --repo defaults to the bundled testdata/miles.
#
#   sudo bash hack/run.sh --stage stage-c-4-gpu-h200 --shard 0 --labels run-ci-megatron --gpus none
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
engine=$repo/hack/engine/engine.sh
export GOTOOLCHAIN=local

bash "$engine" start >&2
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$repo" && go build -o "$bin/miles-ci" ./cmd/miles-ci)
args=("$@")
if [[ " $* " != *" --repo "* && " $* " != *" --repo="* ]]; then
	args=(--repo "$repo/testdata/miles" "${args[@]}")
fi
status=0
bash "$engine" run "$bin/miles-ci" run "${args[@]}" || status=$?
exit "$status"
