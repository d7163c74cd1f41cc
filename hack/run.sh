#!/usr/bin/env bash
# Runs `miles-ci run ARGS` (one stage shard in its container) on a Dagger engine and
# prints the results; exits like the suite. The engine is the installed dagger CLI's,
# or, with none installed, the project's own hermetic engine: hack/engine/engine.sh
# builds it the first time (about 30 min on 2 cores with empty Go caches; needs root,
# apt and ~10 GB) and starts it. --repo defaults to the bundled testdata/miles.
#
#   sudo bash hack/run.sh --stage stage-c-4-gpu-h200 --shard 1 --labels run-ci-megatron --gpus none
#
# The run happens in a network namespace with only loopback, so a GitHub API stand-in
# started beside it is out of reach. MILES_CI_GITHUB_STANDIN=DIR starts the stand-in
# (github/githubtest/standin) on DIR's recorded answers inside that namespace and points
# GITHUB_API_URL at it, so --pr N works offline:
#
#   MILES_CI_GITHUB_STANDIN=testdata/github bash hack/run.sh --pr 2874 --stage stage-c-4-gpu-h200 --shard 1 --dry-run
#
# MILES_CI_SUBCOMMAND names another subcommand to run the same way (hack/ci.sh: ci).
set -euo pipefail
sub=${MILES_CI_SUBCOMMAND:-run}
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
if [[ -n ${MILES_CI_GITHUB_STANDIN:-} ]]; then
	(cd "$repo" && go build -o "$bin/standin" ./github/githubtest/standin)
	# $1 stand-in, $2 its answers, $3 a scratch folder; the rest is the command. No
	# argument is ever part of the script text.
	# shellcheck disable=SC2016 # the script expands its own $1..$3, not this shell
	script='"$1" "$2" >"$3/standin.out" 2>"$3/standin.err" &
pid=$!
for _ in $(seq 1 100); do grep -q "^GITHUB_API_URL=" "$3/standin.out" && break; sleep 0.1; done
url=$(grep -m1 "^GITHUB_API_URL=" "$3/standin.out") || { cat "$3/standin.err" >&2; exit 125; }
export GITHUB_API_URL=${url#GITHUB_API_URL=}
shift 3
rc=0
"$@" || rc=$?
kill "$pid" 2>/dev/null
exit "$rc"'
	bash "$engine" run bash -c "$script" run "$bin/standin" "$MILES_CI_GITHUB_STANDIN" "$bin" "$bin/miles-ci" "$sub" "${args[@]}" || status=$?
else
	bash "$engine" run "$bin/miles-ci" "$sub" "${args[@]}" || status=$?
fi
exit "$status"
