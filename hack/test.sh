#!/usr/bin/env bash
# The project's test command (README "Set up", docs/testing.md; .ci/run calls it): static checks
# (gofmt, go vet, staticcheck, shellcheck, actionlint) and unit tests of the Go
# modules, then the end-to-end tests on a real Dagger engine (hack/e2e.sh: needs
# root, apt and ~10 GB; MILES_CI_SKIP_E2E=1 skips them).
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
# staticcheck at a pinned version, built from the Go module proxy: no entry in either
# go.mod. Its default checks, with //lint:ignore and a reason where code must differ.
staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2
echo "== staticcheck ./... and hack/ (${staticcheck#*/cmd/})"
go run "$staticcheck" ./...
(cd hack && go run "$staticcheck" ./...)
# The runtime history's tests run against a real PostgreSQL too (issue 25): a throwaway
# server in a temporary folder (hack/postgres.sh; Debian's postgresql, installed with apt-get
# on a fresh machine as root), on a unix socket only, stopped on exit. Without it they test
# SQLite alone, and under CI=true they fail.
if [ -z "${MILES_CI_TEST_POSTGRES:-}" ]; then
	pgdir=$(mktemp -d /tmp/miles-ci-postgres.XXXXXX)
	trap 'bash hack/postgres.sh stop "$pgdir"; rm -rf "$pgdir"' EXIT
	echo "== PostgreSQL for the history tests (hack/postgres.sh start $pgdir)"
	if MILES_CI_TEST_POSTGRES=$(bash hack/postgres.sh start "$pgdir"); then
		export MILES_CI_TEST_POSTGRES
	else
		echo "hack/postgres.sh could not start PostgreSQL: the history tests use SQLite only (and fail under CI=true)"
	fi
fi
echo "== go test ./..."
go test ./...

# ShellCheck lints the container scripts and hack/'s own, and lets actionlint check the
# workflows' run: scripts. A machine without it installs it as root with apt-get.
if ! command -v shellcheck >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "== apt-get install shellcheck"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck; } >/dev/null 2>&1 ||
		echo "apt-get could not install shellcheck"
fi
if command -v shellcheck >/dev/null; then
	# Not hack/engine/build-{dagger,gosdk}.sh and hack/images/build-images.sh: each hashes
	# its own text into its build stamp, so an edit rebuilds the engine or the images.
	echo "== shellcheck stagerun/scripts/*.sh (the container scripts), .ci/run and hack/"
	mapfile -t scripts < <(find stagerun/scripts hack -name '*.sh' ! -path hack/engine/build-dagger.sh \
		! -path hack/engine/build-gosdk.sh ! -path hack/images/build-images.sh | sort)
	shellcheck .ci/run "${scripts[@]}"
else
	echo "== shellcheck skipped: it is not installed and could not be (apt-get install shellcheck as root); actionlint runs without it"
fi
echo "== actionlint on examples/workflows (hack/workflowlint)"
(cd hack && go test ./workflowlint/)
if [ "${MILES_CI_SKIP_E2E:-}" = 1 ]; then
	echo "== hack/e2e.sh skipped (MILES_CI_SKIP_E2E=1)"
	exit 0
fi
echo "== hack/e2e.sh"
# Say which engine the end-to-end tests use before they take minutes: the running one
# (never restarted: engine.sh start says so when it was started with other images or
# scripts), else engine.sh start builds and starts one (root, apt, ~10 GB; 20-30 min the
# first time). MILES_CI_SKIP_E2E=1 skips all of it.
if bash hack/engine/engine.sh status </dev/null 2>/dev/null | grep -q '^engine: running'; then
	echo "using the running engine (hack/engine/engine.sh status); engine.sh start says when it was started with other images or scripts"
else
	echo "no engine runs: hack/e2e.sh builds and starts one (hack/engine/engine.sh start; root, apt, ~10 GB) and leaves it running (hack/engine/engine.sh stop)"
fi
bash hack/e2e.sh </dev/null
