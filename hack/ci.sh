#!/usr/bin/env bash
# Runs `miles-ci ci ARGS` (every job one event's PR workflows run, on this host) on a
# Dagger engine, as hack/run.sh runs `miles-ci run`: the installed dagger CLI's engine,
# else the project's hermetic one. --repo defaults to the bundled testdata/miles.
#
#   bash hack/ci.sh --event pull_request --pr-labels-json '["run-ci-megatron"]' --gpus none
set -euo pipefail
MILES_CI_SUBCOMMAND=ci exec bash "$(dirname "$0")/run.sh" "$@"
