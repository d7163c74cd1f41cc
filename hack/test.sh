#!/usr/bin/env bash
# The project's test command (README "Tests"; .ci/run calls it): static checks and
# unit tests of the Go module, then the end-to-end tests on a real Dagger engine
# (hack/e2e.sh: needs root, apt and ~10 GB; MILES_CI_SKIP_E2E=1 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local

echo "== gofmt -l ."
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "these files need gofmt -w:" >&2
	echo "$unformatted" >&2
	exit 1
fi
echo "== go vet ./..."
go vet ./...
echo "== go test ./..."
go test ./...
echo "== actionlint on examples/workflows (hack/workflowlint)"
if ! command -v shellcheck >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	# shellcheck lets actionlint check the run: scripts too; the test runs without it.
	apt-get install -y -qq shellcheck >/dev/null 2>&1 || echo "shellcheck not installed; linting workflows without it"
fi
(cd hack && go test ./workflowlint/)
if [ "${MILES_CI_SKIP_E2E:-}" = 1 ]; then
	echo "== hack/e2e.sh skipped (MILES_CI_SKIP_E2E=1)"
	exit 0
fi
echo "== hack/e2e.sh"
# Say which engine the end-to-end tests use before they take minutes: the running one
# when it was started with these images and scripts, else engine.sh start builds and
# starts one (root, apt, ~10 GB; 20-30 min the first time), restarting an engine that
# runs with other ones. MILES_CI_SKIP_E2E=1 skips all of it.
if bash hack/engine/engine.sh status 2>/dev/null | grep -q '^engine: running'; then
	echo "using the running engine (hack/engine/engine.sh status); it is restarted if it was started with other images or scripts"
else
	echo "no engine runs: hack/e2e.sh builds and starts one (hack/engine/engine.sh start; root, apt, ~10 GB) and leaves it running (hack/engine/engine.sh stop)"
fi
bash hack/e2e.sh </dev/null
