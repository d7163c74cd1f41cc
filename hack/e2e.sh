#!/usr/bin/env bash
# End-to-end tests of the miles-ci Dagger module on a real engine: starts the hermetic
# engine if needed (hack/engine/engine.sh), then checks that
#   - `dagger functions` lists the module's functions, and --help documents their arguments,
#   - `dagger call stages|plan|policy` print byte-for-byte what the miles-ci CLI prints,
#   - with-pr reads a PR from a GitHub API stand-in as `miles-ci ... --pr` does, and its
#     --token secret appears in no output (hack/e2e/pr.sh),
#   - stage shards run in their containers with the expected results (hack/e2e/stages.sh:
#     CUDA, CPU, ROCm and its patch states, single-file and release runs, secrets, layer
#     reuse, `miles-ci run`),
#   - hostile tests cannot forge, symlink, bind-mount, flood or leak their way to a green
#     or leaky result, through the module and `miles-ci run` (hack/e2e/trust.sh),
#   - each stand-in image pulls by its production name and works offline
#     (git fetch of the dependency refs, GPU tool stand-ins, pip from local wheels),
#   - a container cannot reach an address outside the machine,
#   - `dagger check` runs miles-ci's lint and verify on a Miles checkout that installs it as
#     a toolchain, and fails on drift (hack/e2e/check.sh),
#   - `miles-ci ci` and the module's `ci` run the whole PR graph on stand-ins: fast-fail,
#     bypass-fastfail, the PR image, SIGINT; the README's whole-CI command and its failing
#     example on the bundled tree, as written (hack/e2e/ci.sh, about 7 minutes),
#   - hosts that know their GPUs: a --hosts fleet with a host down, two runs on one host
#     never sharing a device, a killed run freeing its devices; hosts that fail (refused, failing
#     fast, dying mid-run) are down at once, Ctrl-C ends a fleet run within 2 s, and no dagger
#     session outlives a run (hack/e2e/hosts.sh),
#   - `ci --rerun-failed` runs only the failed shard and its dependents and keeps the rest
#     byte for byte, refuses another event or commit; `triage` gives regression,
#     pre-existing, flaky and not-reproduced on planted tests, on the CLI and the module
#     (hack/e2e/rerun.sh, about 6 minutes),
#   - the "CI failed on my PR" guide: docs/when-ci-fails.md's commands in order, as written,
#     on a fixture playing PR 2542 against the GitHub API stand-in (hack/e2e/guide.sh),
#   - on one stand-in 8-GPU host the PR graph's span is within 1.15x of its lower bound, the
#     what-if of that run from its history within 15% of its span, and a fleet of hosts that do
#     not exist predicted in a shorter span, each GPU shard on a host of its model
#     (hack/e2e/whatif.sh, about 3 minutes),
#   - the module's Go test module calls plan, ci ... plan, a stage run and lint through its
#     typed client (hack/e2e/moduletest.sh),
#   - `engine.sh start` takes the next slot while an unseen engine holds the state
#     (hack/e2e/slots.sh),
#   - `--cache-registry`: a second run pulls the dependency layers the first published to
#     the stand-in registry, and `ci` counts pulls and builds; a re-pointed content-key tag
#     is refused and rebuilt (hack/e2e/layers.sh),
#   - the committed generated bindings match `dagger develop` (hack/check-generated.sh).
# Clients run in a network namespace with only loopback. Ends with
# "e2e: N passed, M failed" and exits non-zero on any failure. See docs/engine.md.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
engine=$repo/hack/engine/engine.sh
export GOTOOLCHAIN=local

bash "$engine" start
eval "$(bash "$engine" env)"
dagger() { bash "$engine" run dagger --progress=plain "$@"; }

fixture=testdata/miles
if [[ ! -d $fixture/tests ]]; then
	fixture=hack/e2e/testdata/miles-mini
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/miles-ci" ./cmd/miles-ci
(cd hack && go mod download) # the Go e2e tests then build with no network

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "--- PASS: $1"; }
bad() { failed=$((failed + 1)); echo "--- FAIL: $1"; }

# same NAME CLI-ARGS -- DAGGER-CALL-ARGS: the two outputs must be equal byte for byte.
same() {
	local name=$1 cli=() call=() vars=()
	shift
	# Leading NAME=VALUE words are the CLI's environment; the GitHub run facts of the
	# job running this script (in Actions) never reach it otherwise.
	while [[ $1 =~ ^[A-Z_]+= ]]; do vars+=("$1"); shift; done
	while [[ $1 != -- ]]; do cli+=("$1"); shift; done
	shift
	call=("$@")
	local t0=$SECONDS
	env -u GITHUB_ACTIONS -u GITHUB_SHA -u GITHUB_REF -u GITHUB_EVENT_NAME -u GITHUB_RUN_ID -u GITHUB_RUN_ATTEMPT \
		-u GITHUB_REPOSITORY -u GITHUB_SERVER_URL -u GITHUB_WORKFLOW -u GITHUB_JOB "${vars[@]}" \
		"$out/miles-ci" "${cli[@]}" >"$out/want" 2>"$out/want.err" || true
	if ! dagger call "${call[@]}" >"$out/got" 2>"$out/got.err"; then
		tail -n 20 "$out/got.err"
		bad "$name (dagger call failed)"
	elif cmp -s "$out/want" "$out/got"; then
		ok "$name ($((SECONDS - t0)) s)"
	else
		diff -u "$out/want" "$out/got" | head -n 20 || true
		bad "$name (output differs from the CLI)"
	fi
}

# MILES_CI_E2E_SUITES="trust ..." runs only those suites (of module pr stages trust check
# slots ci hosts layers rerun guide whatif moduletest; module is the module's functions, help and CLI parity below; the stage
# fixture's setup comes along): for a helper who changed one suite. Unset: everything.
suites=${MILES_CI_E2E_SUITES:-}
suite() { [[ -z $suites || " $suites " == *" $1 "* ]]; }
if suite module; then
echo "=== RUN dagger functions"
if dagger functions >"$out/functions" 2>"$out/functions.err" &&
	for f in stages plan policy stage file release release-lock ci; do
		grep -qE "^$f( |$)" "$out/functions" || { echo "dagger functions: no $f" >&2; exit 1; }
	done; then
	ok "dagger functions"
else
	cat "$out/functions" "$out/functions.err" | tail -n 20
	bad "dagger functions"
fi

echo "=== RUN --help"
if dagger call --help >"$out/help" 2>&1 && grep -q -- "--gpus" "$out/help" && grep -q "with-secrets" "$out/help" &&
	dagger call with-secrets --help >"$out/help-secrets" 2>&1 && grep -q -- "--wandb-api-key" "$out/help-secrets" &&
	dagger call stage --help >"$out/help-stage" 2>&1 && grep -q -- "--match-all-labels" "$out/help-stage" &&
	grep -q "Raw PR labels passed to run_suite.py" "$out/help-stage" && grep -q -- "--cadence NIGHTLY,REGULAR,RELEASE,WEEKLY" "$out/help-stage" &&
	dagger call plan --help >"$out/help-plan" 2>&1 && grep -q -- "--hw CPU,CUDA,ROCM" "$out/help-plan"; then
	ok "--help documents the constructor, its facets, the stage arguments and the enums' values"
else
	tail -n 30 "$out/help" "$out/help-stage"
	bad "--help"
fi

same "call stages" stages --json -- stages json
same "call stages of the source" stages --repo "$fixture" --json -- --source "$fixture" stages json
same "call plan on the constructor's source" plan --repo "$fixture" --hw cpu --suite stage-a-cpu --json \
	-- --source "$fixture" plan --hw cpu --suite stage-a-cpu json
same "call plan cpu" plan --repo "$fixture" --hw cpu --suite stage-a-cpu --json \
	-- --source "$fixture" plan --hw cpu --suite stage-a-cpu json
same "call plan cuda partitioned" plan --repo "$fixture" --hw cuda --suite stage-c-2-gpu-h200 \
	--cadence nightly --labels run-ci-megatron --auto-partition-id 0 --auto-partition-size 2 --continue-on-error --json \
	-- --source "$fixture" plan --hw cuda --suite stage-c-2-gpu-h200 --cadence nightly \
	--labels run-ci-megatron --auto-partition-id 0 --auto-partition-size 2 --continue-on-error json
same "call plan match-all-labels" plan --repo "$fixture" --hw cuda --suite stage-c-2-gpu-h200 --match-all-labels --json \
	-- --source "$fixture" plan --hw cuda --suite stage-c-2-gpu-h200 --match-all-labels json
same "call plan --all (every shard of the roster)" plan --repo "$fixture" --all --cadence nightly --json \
	-- --source "$fixture" plan --all --cadence nightly json
if [[ -f $fixture/diffs/mixed_tests.z ]]; then
	cp "$fixture/diffs/mixed_tests.z" "$out/changed"
else
	printf 'M\0tests/fast/test_x.py\0' >"$out/changed"
fi
same "call policy pull_request" policy --event pull_request --repo "$fixture" \
	--pr-labels-json '["run-ci-megatron"]' --changed-files "$out/changed" --json \
	-- --source "$fixture" policy --event pull_request --pr-labels run-ci-megatron --changed-files "$out/changed" json
same "call policy schedule" policy --event schedule --repo "$fixture" --schedule "0 15 * * 6" --json \
	-- --source "$fixture" policy --event schedule --schedule "0 15 * * 6" json

# Bad input must surface as an error naming it.
echo "=== RUN call plan error"
if dagger call --source "$fixture" plan --hw nope --suite stage-a-cpu >"$out/got" 2>"$out/got.err"; then
	bad "call plan error (wanted a failure)"
elif grep -q 'invalid argument "nope" for "--hw" flag: value should be one of CPU,CUDA,ROCM' "$out/got.err"; then
	ok "call plan error"
else
	tail -n 10 "$out/got.err"
	bad "call plan error (error does not name the bad backend)"
fi

# A typo is an error naming the nearest known name, on the module as on the CLI
# (usecase.UnknownError); with a mistyped label the answer stays Miles'.
typo() { # NAME WANT -- dagger call args
	local name=$1 want=$2
	shift 3
	echo "=== RUN $name"
	if dagger call "$@" >"$out/got" 2>"$out/got.err"; then
		bad "$name (wanted a failure)"
	elif grep -qF "$want" "$out/got.err"; then
		ok "$name"
	else
		tail -n 10 "$out/got.err"
		bad "$name (error does not name $want)"
	fi
}
typo "call plan mistyped suite" "did you mean stage-a-cpu?" -- --source "$fixture" plan --hw cpu --suite stage-a-cpuu
typo "call stage mistyped name" "did you mean stage-b-cpu?" -- --source "$fixture" stage --name stage-b-cpuu shard --number 1 plan
typo "call ci --only mistyped stage" "did you mean stage-a-cpu?" -- --source "$fixture" --gpus none ci --event schedule --schedule "0 15 * * 0-5" --only stage-z plan
same "call plan with a mistyped label (Miles' answer)" plan --repo "$fixture" --hw cpu --suite stage-a-cpu --labels run-ci-megatorn --json \
	-- --source "$fixture" plan --hw cpu --suite stage-a-cpu --labels run-ci-megatorn json
echo "=== RUN call plan with a mistyped label: the warning in messages"
if dagger call --source "$fixture" plan --hw cpu --suite stage-a-cpu --labels run-ci-megatorn messages text >"$out/got" 2>"$out/got.err" &&
	grep -qF "run-ci-megatorn is not a label this checkout knows (tests/ci/labels.py), so it selects nothing; did you mean run-ci-megatron?" "$out/got"; then
	ok "call plan with a mistyped label: the warning in messages"
else
	tail -n 10 "$out/got" "$out/got.err"
	bad "call plan with a mistyped label: messages do not name run-ci-megatron"
fi

fi

if suite pr; then source hack/e2e/pr.sh; fi
# (the stage fixture and helpers of stages.sh are what trust.sh builds on)
if suite stages || suite trust || suite moduletest; then
	suite stages || MILES_CI_E2E_SETUP_ONLY=1
	source hack/e2e/stages.sh
	unset MILES_CI_E2E_SETUP_ONLY
fi
if suite trust; then source hack/e2e/trust.sh; fi
if suite check; then source hack/e2e/check.sh; fi
if suite slots; then source hack/e2e/slots.sh; fi
if suite ci; then source hack/e2e/ci.sh; fi
if suite hosts; then source hack/e2e/hosts.sh; fi
if suite layers; then source hack/e2e/layers.sh; fi
if suite rerun; then source hack/e2e/rerun.sh; fi
if suite guide; then source hack/e2e/guide.sh; fi
if suite whatif; then source hack/e2e/whatif.sh; fi
if suite moduletest; then source hack/e2e/moduletest.sh; fi

if [[ -z $suites ]]; then
echo "=== RUN generated bindings"
if bash hack/check-generated.sh >"$out/gen" 2>&1; then
	ok "generated bindings up to date"
else
	tail -n 20 "$out/gen"
	bad "generated bindings up to date"
fi

# Image smoke tests and isolation, as Go tests against the engine.
echo "=== RUN go test -tags e2e ./e2e/"
if (cd hack && bash "$engine" run go test -count=1 -tags e2e -v ./e2e/) >"$out/gotest" 2>&1; then
	grep -E '^\s*(--- (PASS|FAIL|SKIP)|ok|FAIL)|images_test.go' "$out/gotest" || true
else
	tail -n 60 "$out/gotest"
fi
p=$(grep -cE -- '^\s*--- PASS' "$out/gotest" || true)
f=$(grep -cE -- '^\s*--- FAIL' "$out/gotest" || true)
if grep -q '^ok' "$out/gotest"; then :; elif ((f == 0)); then f=1; fi
passed=$((passed + p))
failed=$((failed + f))
fi

echo "e2e: $passed passed, $failed failed"
((failed == 0))
