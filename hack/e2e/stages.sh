# Stage-pipeline checks of hack/e2e.sh (sourced by it: uses dagger, ok, bad, $out,
# $engine). On the fixture hack/e2e/testdata/stages, completed from testdata/miles:
#   - a CUDA shard and a CPU shard: per-file results, assert failing on the failing file,
#     not-run after a fail-fast stop, a timeout with continue-on-error;
#   - a secret given to the call appears in no output, log or result file;
#   - ROCm with only ci-sglang-pr (Megatron-LM untouched, not reinstalled) and with a
#     Megatron-LM ref in each of the three patch states;
#   - single-file runs (CUDA and ROCm) and a release run from a lockfile release-lock made;
#   - layer reuse from the layer stamps (no timing);
#   - `miles-ci run` on the same engine, and its --dry-run JSON equal to the module's spec;
#   - `miles-ci run --batch 1` of a B200 pool fixture: each file alone at its GPU count;
#   - the metric gate: a test's metric records judged in a run's results, stored on a
#     nightly run with --gate-db, and judged by the module without a store;
#   - with MILES_CI_REAL_MILES=DIR (opt-in), the same CUDA and CPU shards under that Miles
#     checkout's own tests/ci runner.
# Expected commits come from hack/images/mkrepos.sh, which builds the images' repositories
# with fixed dates.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

set +e # each check records its own outcome; errexit comes back at the end
fx=$out/fx
mkdir -p "$fx"
cp -r hack/e2e/testdata/stages/. "$fx/"
cp testdata/miles/tests/ci/run_suite.py testdata/miles/tests/ci/verify_source_resolution.py \
	testdata/miles/tests/ci/ci_register.py "$fx/tests/ci/"
mkdir -p "$fx/docker/amd_patch/latest"
cp testdata/miles/docker/amd_patch/latest/megatron.patch "$fx/docker/amd_patch/latest/"

bash hack/images/mkrepos.sh "$out/repos" >/dev/null
commit() { git -C "$out/repos/opt/git/$1.git" rev-parse "$2"; }
sglang_main=$(commit sglang sglang-miles)
sglang_1234=$(commit sglang refs/pull/1234/head)
megatron_main=$(commit Megatron-LM miles-main)
megatron_patched=$(commit Megatron-LM rocm-patched)

WANDB_API_KEY="e2e-wandb-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
HF_TOKEN="e2e-hf-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
export WANDB_API_KEY HF_TOKEN
wandb_sha=$(printf %s "$WANDB_API_KEY" | sha256sum | cut -d' ' -f1)
hf_sha=$(printf %s "$HF_TOKEN" | sha256sum | cut -d' ' -f1)
run=e2e-$$-$(date +%s)
# Raising nofile and memlock above the engine's hard limits needs CAP_SYS_RESOURCE;
# where the machine has none (some sandboxes), the run must say so in run.log.
if python3 -c 'import sys; sys.exit(0 if int([l.split()[1] for l in open("/proc/self/status") if l.startswith("CapBnd")][0], 16) >> 24 & 1 else 1)'; then
	limits=("limit nofile: (65535, 65535)" "limit memlock: (-1, -1)")
else
	limits=("::warning::could not raise ulimit -n to 65535 (needs CAP_SYS_RESOURCE)" "::warning::could not raise ulimit -l to unlimited (needs CAP_SYS_RESOURCE)")
fi
printf 'ci-sglang-pr: #1234\n' >"$out/body-sglang.md"

# json FILE EXPR: EXPR (Python, with s = the parsed file) must be true.
json() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    print("json check failed:", sys.argv[2], file=sys.stderr)
    print(json.dumps(s, indent=1)[:3000], file=sys.stderr)
sys.exit(0 if ok else 1)' "$@"
}
statuses() { echo "[t['status'] for t in s['tests']] == $1"; }
# has FILE TEXT...: every TEXT appears in FILE.
has() {
	local f=$1 t
	shift
	for t in "$@"; do
		grep -qF -- "$t" "$f" || { echo "missing in $f: $t" >&2; return 1; }
	done
}
# mc CALL-ARGS...: dagger call on the fixture without GPUs; stdout in $out/last.out,
# stderr (progress, errors) in $out/last.log.
mc() { dagger call --source "$fx" --gpus none "$@" >"$out/last.out" 2>"$out/last.log"; }
check() { # check RC NAME: pass when RC is 0, else show the last call's output
	if (($1 == 0)); then ok "$2"; else tail -n 40 "$out/last.log" "$out/last.out"; bad "$2"; fi
}

# Only the fixture and the helpers above, for hack/e2e.sh MILES_CI_E2E_SUITES=trust.
if [[ -n ${MILES_CI_E2E_SETUP_ONLY:-} ]]; then
	set -e
	return 0
fi

echo "=== RUN stage cuda shard"
t0=$SECONDS
mc with-secrets --wandb-api-key env:WANDB_API_KEY stage --name stage-b-2-gpu-h200 --labels run-ci-short \
	shard --number 1 test --run-id "$run" results export --path "$out/cuda"
rc=$?
cat "$out/last.out" "$out/last.log" >"$out/cuda-call.log"
((rc == 0)) && json "$out/cuda/summary.json" "$(statuses "['pass', 'fail', 'not-run']") and s['exit_code'] == 255 and not s['passed'] and s['shard'] is None" &&
	has "$out/cuda/run.log" "secret value: ***" "secret sha256: $wandb_sha" "${limits[@]}" \
		"limit stack: (67108864, 67108864)" "shm bytes: 34359738368" \
		"module sglang: /sgl-workspace/sglang/python/sglang/__init__.py" "commit name: local_non-pr" &&
	test -s "$out/cuda/junit.xml" -a -s "$out/cuda/plan.txt" -a -s "$out/cuda/exit-code"
check $? "stage cuda shard: results ($((SECONDS - t0)) s)"

mc with-secrets --wandb-api-key env:WANDB_API_KEY stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test --run-id "$run" assert
rc=$?
cat "$out/last.out" "$out/last.log" >"$out/cuda-assert.log"
((rc != 0)) && has "$out/last.log" "stage-b-2-gpu-h200 failed with exit code 255: tests/e2e/gpu/test_b_fail.py (exit 1); not run: tests/e2e/gpu/test_c_timeout.py"
check $? "stage cuda shard: assert names the failed file"

echo "=== RUN secret redaction"
leaks=$(grep -rlF -- "$WANDB_API_KEY" "$out/cuda" "$out/cuda-call.log" "$out/cuda-assert.log" 2>/dev/null || true)
if [[ -z $leaks ]] && grep -qF "secret sha256: $wandb_sha" "$out/cuda/run.log"; then
	ok "secret redaction: the value reached the test and appears in no output, log or result"
else
	bad "secret redaction (leaked in: ${leaks:-none}; reached the test: $(grep -c "$wandb_sha" "$out/cuda/run.log"))"
fi

echo "=== RUN stage cuda continue-on-error"
t0=$SECONDS
mc stage --name stage-b-2-gpu-h200 --labels run-ci-short,bypass-fastfail shard --number 1 test results export --path "$out/cuda-all" &&
	json "$out/cuda-all/summary.json" "$(statuses "['pass', 'fail', 'timeout']") and s['tests'][2]['timeout_s'] == 4 and s['tests'][1]['exit_code'] == 1"
check $? "stage cuda shard with bypass-fastfail: a timeout ($((SECONDS - t0)) s)"

echo "=== RUN stage cpu shard"
t0=$SECONDS
mc with-secrets --hf-token env:HF_TOKEN stage --name stage-b-cpu shard --number 1 test --run-id "$run" results export --path "$out/cpu" &&
	json "$out/cpu/summary.json" "$(statuses "['pass', 'fail', 'not-run']") and s['exit_code'] == 1 and s['image'] == 'python:3.11'" &&
	has "$out/cpu/junit.xml" 'classname="tests.fast.test_cpu_a_ok"' &&
	has "$out/cpu/artifacts/hf-token.sha256" "$hf_sha" &&
	! grep -rqF -- "$HF_TOKEN" "$out/cpu" "$out/last.log" "$out/last.out"
check $? "stage cpu shard: results from pytest's JUnit, checkouts from GitHub URLs ($((SECONDS - t0)) s)"
mc with-secrets --hf-token env:HF_TOKEN stage --name stage-b-cpu shard --number 1 test --run-id "$run" assert
rc=$?
((rc != 0)) && has "$out/last.log" "stage-b-cpu failed with exit code 1: tests/fast/test_cpu_b_fail.py (fail); not run: tests/fast/test_cpu_c_later.py"
check $? "stage cpu shard: assert names the failed file"

echo "=== RUN rocm with only ci-sglang-pr"
t0=$SECONDS
mc with-pull-request --body-file "$out/body-sglang.md" stage --name stage-c-4-gpu-mi350 --labels run-ci-amd shard --number 1 test results export --path "$out/rocm" &&
	json "$out/rocm/summary.json" "$(statuses "['pass']") and s['image'] == 'rocm/sgl-dev:miles-rocm720-mi35x'" &&
	has "$out/rocm/run.log" "platform: rocm" "sglang head: $sglang_1234" "megatron head: $megatron_main" "megatron diff: none" \
		"installed sglang: /sgl-workspace/sglang/python/sglang/__init__.py" "installed megatron: no" &&
	mc with-pull-request --body-file "$out/body-sglang.md" stage --name stage-c-4-gpu-mi350 --labels run-ci-amd shard --number 1 spec json &&
	json "$out/last.out" "not any(st.get('workdir') == '/root/Megatron-LM' for st in s['steps'])"
check $? "rocm: only ci-sglang-pr moves SGLang; Megatron-LM untouched and not installed ($((SECONDS - t0)) s)"

# megatron STATE REF: the ROCm container with ci-megatron-pr: REF; prints HEAD and the diff.
megatron() {
	printf 'ci-megatron-pr: %s\n' "$2" >"$out/body-$1.md"
	mc with-pull-request --body-file "$out/body-$1.md" stage --name stage-c-4-gpu-mi350 shard --number 1 container \
		with-exec --args "sh,-c,git -C /root/Megatron-LM rev-parse HEAD && git -C /root/Megatron-LM diff --stat" stdout
}
echo "=== RUN rocm patch states"
megatron apply miles-main && has "$out/last.out" "$megatron_main" "megatron/core/__init__.py | 2 +-"
check $? "rocm patch: applies cleanly (miles-main)"
megatron present rocm-patched && has "$out/last.out" "$megatron_patched" && ! grep -q "megatron/core/__init__.py |" "$out/last.out"
check $? "rocm patch: already present (rocm-patched)"
megatron conflict rocm-conflict
rc=$?
((rc != 0)) && has "$out/last.log" "Selected Megatron ref is incompatible with the ROCm patch" "rocm-conflict"
check $? "rocm patch: incompatible ref fails closed with the message (rocm-conflict)"

echo "=== RUN single-file runs"
mc with-secrets --wandb-api-key env:WANDB_API_KEY file --path tests/e2e/gpu/test_a_pass.py test results export --path "$out/file-cuda" &&
	json "$out/file-cuda/summary.json" "s['file'] == 'tests/e2e/gpu/test_a_pass.py' and $(statuses "['pass']") and s['tests'][0]['timeout_s'] == 1800 and s['shard'] is None"
check $? "single-file run: cuda"
mc file --path tests/e2e/amd/test_rocm.py test results export --path "$out/file-rocm" &&
	json "$out/file-rocm/summary.json" "s['hw'] == 'rocm' and $(statuses "['pass']")"
check $? "single-file run: rocm (a miles-ci addition)"

echo "=== RUN release run"
mc release-lock --branch release/v0.1.0 export --path "$out/release-lock.json" &&
	json "$out/release-lock.json" "s['sglang_commit'] == '$sglang_main' and s['megatron_commit'] == '$megatron_main' and s['ci_image_tag'] == 'release-v0.1.0-ci'" &&
	mc release --lockfile "$out/release-lock.json" stage --name stage-c-4-gpu-h200 shard --number 1 test results export --path "$out/release" &&
	json "$out/release/summary.json" "s['cadence'] == 'release' and s['image'] == 'radixark/miles:release-v0.1.0-ci' and $(statuses "['pass']")" &&
	has "$out/release/run.log" "sglang head: $sglang_main" "megatron head: $megatron_main"
check $? "release run from the lockfile release-lock made"

echo "=== RUN layer reuse"
# stamps DIR [BODY [MODULE-ARGS...]]: the layer stamps of the CUDA shard's container, one
# line per phase (base, requirements, deps, source); a cached phase keeps its stamp.
stamps() {
	local src=$1 body=()
	[[ -n ${2:-} ]] && body=(with-pull-request --body-file "$2")
	shift $(($# < 2 ? $# : 2))
	dagger call --source "$src" --gpus none "${body[@]}" "$@" stage --name stage-b-2-gpu-h200 shard --number 1 container \
		with-exec --args cat,/opt/miles-ci/layers/base,/opt/miles-ci/layers/requirements,/opt/miles-ci/layers/deps,/opt/miles-ci/layers/source \
		stdout 2>"$out/last.log"
}
# same_stamps A B MASK: MASK is one letter per phase, s = same stamp, d = different.
same_stamps() {
	local i got=""
	mapfile -t a <<<"$1"
	mapfile -t b <<<"$2"
	((${#a[@]} == 4 && ${#b[@]} == 4)) || { echo "stamps: want 4 lines, got '$1' and '$2'" >&2; return 1; }
	for i in 0 1 2 3; do
		if [[ ${a[i]} == "${b[i]}" ]]; then got+=s; else got+=d; fi
	done
	[[ $got == "$3" ]] || { echo "stamps: wanted $3 (base req deps source), got $got" >&2; return 1; }
}
cp -r "$fx" "$out/fx-test" && echo "# edited" >>"$out/fx-test/tests/e2e/gpu/test_a_pass.py"
cp -r "$fx" "$out/fx-req" && echo "# edited" >>"$out/fx-req/requirements.txt"
s0=$(stamps "$fx") && s1=$(stamps "$out/fx-test") && same_stamps "$s0" "$s1" sssd
check $? "layer reuse: editing one test file re-runs only the source phase"
s2=$(stamps "$out/fx-req") && same_stamps "$s0" "$s2" sddd
check $? "layer reuse: editing requirements.txt re-runs requirements, deps and source"
s3=$(stamps "$fx" "$out/body-sglang.md") && same_stamps "$s0" "$s3" ssdd
check $? "layer reuse: a ci-sglang-pr directive re-runs deps and source"

echo "=== RUN GitHub run facts"
# As the generated workflows pass them: one CSV-quoted NAME=VALUE per --github-env (a
# workflow name may hold a comma or a quote).
gh_run=(with-github-env --env '"GITHUB_RUN_ID=4242",GITHUB_RUN_ATTEMPT=2,GITHUB_EVENT_NAME=schedule,GITHUB_REF=refs/heads/main'
	--env '"GITHUB_WORKFLOW=PR ""Test"", e2e"')
mc "${gh_run[@]}" stage --name stage-b-2-gpu-h200 shard --number 1 container with-exec --args env stdout &&
	has "$out/last.out" "GITHUB_RUN_ID=4242" "GITHUB_RUN_ATTEMPT=2" "GITHUB_EVENT_NAME=schedule" "GITHUB_REF=refs/heads/main" \
		'GITHUB_WORKFLOW=PR "Test", e2e' "GITHUB_COMMIT_NAME=local_non-pr" && ! grep -q "^GITHUB_SHA=" "$out/last.out"
check $? "GitHub run facts: the values given reach the container's env, a comma and a quote intact"
s4=$(stamps "$fx" "" with-github-env --env GITHUB_RUN_ID=1,GITHUB_RUN_ATTEMPT=1) && same_stamps "$s0" "$s4" ssss &&
	s5=$(stamps "$fx" "" with-github-env --env GITHUB_RUN_ID=2,GITHUB_RUN_ATTEMPT=1) && same_stamps "$s4" "$s5" ssss
check $? "GitHub run facts: a new run id re-runs no phase before the run"
mc with-github-env --env GITHUB_TOKEN=e2e-not-a-fact stage --name stage-b-cpu plan
rc=$?
# (dagger's own progress lists the call's arguments; the error itself must not repeat it.)
((rc != 0)) && has "$out/last.log" '--github-env: "GITHUB_TOKEN" is not a GitHub run fact a stage container takes' &&
	! grep -F -- "--github-env:" "$out/last.log" | grep -q e2e-not-a-fact
check $? "GitHub run facts: a name off the list fails; the error does not repeat its value"

echo "=== RUN miles-ci run"
t0=$SECONDS
bash "$engine" run "$out/miles-ci" run --repo "$fx" --stage stage-b-2-gpu-h200 --labels run-ci-short --gpus none \
	--results "$out/cli" --quiet >"$out/last.out" 2>"$out/last.log"
rc=$?
((rc == 255)) && json "$out/cli/summary.json" "$(statuses "['pass', 'fail', 'not-run']")" &&
	has "$out/last.out" "FAIL     tests/e2e/gpu/test_b_fail.py" && test -s "$out/cli/run.log" -a -s "$out/cli/junit.xml"
check $? "miles-ci run: the same results on the engine through dagger.io/dagger, exit 255 ($((SECONDS - t0)) s)"
"$out/miles-ci" report --results "$out/cuda" >"$out/last.out" 2>"$out/last.log"
rc=$?
((rc == 255)) && has "$out/last.out" "FAILED, exit code 255" "not-run" "tests/e2e/gpu/test_c_timeout.py"
check $? "miles-ci report reads the module's results folder and exits as the run did (255)"

echo "=== RUN miles-ci run --record (the runtime history, docs/history.md)"
# A run in a GitHub Actions job records its attempts; replaying its rows (the results
# folder's history-rows.json) writes nothing new; an edited copy of them is a conflicting
# replay: refused, the batch rolled back. (Two engine runs of one run id would differ in
# their seconds: by Miles' rules, that is a conflict too.)
ghrun=(env GITHUB_ACTIONS=true GITHUB_SHA=0123456789abcdef0123456789abcdef01234567 GITHUB_RUN_ID=4242 GITHUB_RUN_ATTEMPT=1
	GITHUB_EVENT_NAME=schedule GITHUB_REF=refs/heads/main)
rows() { python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("select count(*) from ci_test_runtime_attempts").fetchone()[0])' "$out/history.db"; }
bash "$engine" run "${ghrun[@]}" "$out/miles-ci" run --repo "$fx" --stage stage-b-2-gpu-h200 --labels run-ci-short --gpus none \
	--results "$out/rec" --record --db "$out/history.db" --quiet >"$out/last.out" 2>"$out/last.log"
rc=$?
okrec=1
((rc == 255)) && has "$out/last.log" "recorded the run's attempts in $out/history.db" && [[ $(rows) == 2 ]] &&
	"$out/miles-ci" history import --results "$out/rec" --db "$out/history.db" >"$out/last.out" 2>"$out/last.log" && [[ $(rows) == 2 ]] && okrec=0
python3 - "$out/rec/history-rows.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["attempts"][1]["elapsed_seconds"] += 99
s["attempts"].append(dict(s["attempts"][0], test_path="tests/e2e/gpu/test_new.py"))
json.dump(s, open(sys.argv[1], "w"))
PY
"$out/miles-ci" history import --results "$out/rec" --db "$out/history.db" >"$out/last.out" 2>"$out/last.log"
rc=$?
((okrec == 0 && rc == 1)) && has "$out/last.log" "the batch was rolled back and nothing was written" && [[ $(rows) == 2 ]]
check $? "miles-ci run --record: the PASS and FAIL attempts recorded; a replay adds nothing; a conflicting replay fails and writes nothing"

# The B200 pool (rules §11.8): batch 1 of a pool fixture runs each of its two files alone
# in its container (run --stage JOB --batch N, through the single-file run); the same
# est_time puts them in file order.
echo "=== RUN miles-ci run --batch (B200 pool)"
pool=$out/fx-pool
rm -rf "$pool" && cp -r "$fx" "$pool" && rm -rf "$pool/tests/e2e" "$pool/tests/fast" &&
	cp testdata/miles-b200pool/tests/ci/{hardware.py,ci_register.py,b200_plan.py,labels.py,run_suite.py} "$pool/tests/ci/" &&
	mkdir -p "$pool/tests/e2e/pool" &&
	for n in 1 2; do
		printf '%s\n' 'from tests.ci.ci_register import register_cuda_ci' '' \
			"register_cuda_ci(est_time=5, suite=\"stage-c-4-gpu-b200\", labels=[\"short\"], hardware=[\"blackwell\"], num_gpus=$n)" '' \
			"print(\"pool file $n ran\")" >"$pool/tests/e2e/pool/test_pool_$n.py"
	done
t0=$SECONDS
bash "$engine" run "$out/miles-ci" run --repo "$pool" --stage stage-c-4-gpu-b200 --batch 1 --labels run-ci-short --gpus none \
	--quiet >"$out/last.out" 2>"$out/last.log"
rc=$?
((rc == 0)) && has "$out/last.log" "batch 1, job 1/2: tests/e2e/pool/test_pool_1.py (1 GPU(s), runs on b200+1gpu)" \
	"batch 1, job 2/2: tests/e2e/pool/test_pool_2.py (2 GPU(s), runs on b200+2gpu)" &&
	[[ $(grep -c "PASS .*tests/e2e/pool/test_pool_" "$out/last.out") == 2 ]]
check $? "miles-ci run --batch 1: each pool file alone in its container, at its own GPU count ($((SECONDS - t0)) s)"
# The same pool in the whole graph: pr-test.yml's stage-c-b200 plans it (stage-c-b200/plan)
# and runs one unit per file at its GPU count (stage-c-b200/test), each into DIR/SUITE/N.
# Its _run-ci.yml reconciles the dependencies first: a stand-in script, an empty examples file.
cp testdata/miles-b200pool/tests/ci/*.py "$pool/tests/ci/" && cp -r testdata/miles-b200pool/.github "$pool/" &&
	printf 'import sys\nprint("reconciled", sys.argv[1:])\n' >"$pool/tests/ci/reconcile_dependencies.py" &&
	mkdir -p "$pool/examples/lora" && : >"$pool/examples/lora/requirements.txt" &&
	bash "$engine" run "$out/miles-ci" ci --repo "$pool" --event pull_request --pr-labels-json '["run-ci-short"]' --gpus none:0-3 \
		--only stage-c-4-gpu-b200 --quiet --results "$out/ci-pool" >"$out/last.out" 2>"$out/last.log"
rc=$?
((rc == 0)) && grep -q "^stage-c-b200/plan .* passed .*2 file(s) in 1 batch(es); has_tests=true" "$out/last.out" &&
	[[ $(grep -cE "^stage-c-b200/test \(Batch 1 / [12] GPU / tests/e2e/pool/test_pool_[12].py\) +passed" "$out/last.out") == 2 ]] &&
	grep -q "pool file 1 ran" "$out/ci-pool/stage-c-4-gpu-b200/0/run.log" && grep -q "pool file 2 ran" "$out/ci-pool/stage-c-4-gpu-b200/1/run.log"
check $? "miles-ci ci: the B200 pool job plans its batch and runs each file at its GPU count"

# The metric gate (rules §16, docs/gate.md): a CUDA test that logs its metrics into
# MILES_CI_GATE_RECORD_DIR (hack/e2e/testdata/gate) in a checkout with the gate
# (testdata/miles-gate's metric_history). A nightly run with --gate-db judges the record
# as a cold start and stores it; a regular run is judged against it; the module's run
# judges it without a store. None of it changes the run's verdict.
echo "=== RUN the metric gate"
gx=$out/fx-gate
rm -rf "$gx" && cp -r "$fx" "$gx" && rm -rf "$gx/tests/e2e" "$gx/tests/fast" && mkdir -p "$gx/tests/e2e/gate" &&
	cp -r testdata/miles-gate/tests/ci/metric_history "$gx/tests/ci/" && cp hack/e2e/testdata/gate/test_metrics.py "$gx/tests/e2e/gate/"
gate() { # gate DIR ARGS...: miles-ci run of the gate fixture into DIR
	local dir=$1
	shift
	bash "$engine" run "$out/miles-ci" run --repo "$gx" --stage stage-b-2-gpu-h200 --labels run-ci-short --gpus none \
		--gate-db "$out/gate.db" --results "$dir" --quiet "$@" >"$out/last.out" 2>"$out/last.log"
}
t0=$SECONDS
gate "$out/gate-1" --nightly
rc=$?
((rc == 0)) && has "$out/last.log" "stored the metric gate's baseline of 1 file(s) in $out/gate.db" &&
	json "$out/gate-1/summary.json" "s['passed'] and s['gate']['writes_baseline'] and [f['verdict'] for f in s['gate']['files']] == ['trusted'] and [c['status'] for c in s['gate']['files'][0]['coordinates']] == ['inactive'] * 3" &&
	test -s "$out/gate-1/$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["gate"]["files"][0]["record"])' "$out/gate-1/summary.json")"
okgate=$?
gate "$out/gate-2"
rc=$?
((okgate == 0 && rc == 0)) && has "$out/last.out" "gate     tests/e2e/gate/test_metrics.py: trusted (3 coordinate(s): 3 pass)" &&
	json "$out/gate-2/summary.json" "not s['gate']['writes_baseline'] and [c['baseline_n'] for c in s['gate']['files'][0]['coordinates']] == [1, 1, 1]" &&
	has "$out/gate-2/report.html" "<h2>Metric gate</h2>"
okgate=$?
dagger call --source "$gx" --gpus none stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test results \
	export --path "$out/gate-module" >"$out/last.out" 2>"$out/last.log"
rc=$?
((okgate == 0 && rc == 0)) && json "$out/gate-module/summary.json" "s['gate']['store'] == '' and [c['status'] for c in s['gate']['files'][0]['coordinates']] == ['inactive'] * 3"
check $? "the metric gate: a run's records judged (a nightly run stores them, the next is judged against them, the module judges without a store) ($((SECONDS - t0)) s)"

# Opt-in: Miles' own runner. MILES_CI_REAL_MILES=DIR names a Miles checkout (never part
# of this repository); its tests/ci runner (run_suite.py and what it imports) replaces the
# stand-in in a copy of the fixture, which keeps its own tests, requirements and
# verify_source_resolution.py (the real ones need PyPI and GPU packages; docs/running.md).
if [[ -n ${MILES_CI_REAL_MILES:-} ]]; then
	echo "=== RUN Miles' own runner from $MILES_CI_REAL_MILES"
	real=$out/fx-real
	if [[ ! -f $MILES_CI_REAL_MILES/tests/ci/run_suite.py ]]; then
		bad "MILES_CI_REAL_MILES=$MILES_CI_REAL_MILES holds no tests/ci/run_suite.py; point it at a Miles checkout"
	else
		rm -rf "$real" && cp -r "$fx" "$real" && cp -r "$MILES_CI_REAL_MILES/tests/ci/." "$real/tests/ci/" &&
			find "$real/tests/ci" -name 'test_*.py' -delete &&
			cp "$fx/tests/ci/verify_source_resolution.py" "$fx/tests/ci/requirements-ci-cpu.txt" "$real/tests/ci/" &&
			rm -f "$real/tests/ci/run_suite_defaults.json"
		# A checkout of the GPU-generation rules (rules §11) needs hardware= on every CUDA test.
		gpugen=
		if [[ -f $MILES_CI_REAL_MILES/tests/ci/hardware.py ]]; then
			gpugen=1
			find "$real/tests" -name 'test_*.py' -exec sed -i -E 's/^(register_cuda_ci\(.*)\)$/\1, hardware=["hopper", "blackwell"])/' {} +
		fi
		rmc() { dagger call --source "$real" --gpus none "$@" >"$out/last.out" 2>"$out/last.log"; }
		t0=$SECONDS
		rmc stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test results export --path "$out/real-cuda" &&
			json "$out/real-cuda/summary.json" "$(statuses "['pass', 'fail', 'not-run']") and s['exit_code'] == 255 and s['tests'][1]['exit_code'] == 1" &&
			has "$out/real-cuda/status.log" "[1/3] tests/e2e/gpu/test_a_pass.py  PASS" "[2/3] tests/e2e/gpu/test_b_fail.py  FAIL"
		check $? "Miles' own runner: a CUDA shard's plan agrees and its status lines give the results ($((SECONDS - t0)) s)"
		t0=$SECONDS
		rmc with-secrets --hf-token env:HF_TOKEN stage --name stage-b-cpu shard --number 1 test results export --path "$out/real-cpu" &&
			json "$out/real-cpu/summary.json" "$(statuses "['pass', 'fail', 'not-run']") and s['exit_code'] == 1" &&
			has "$out/real-cpu/junit.xml" 'classname="tests.fast.test_cpu_a_ok"'
		check $? "Miles' own runner: a CPU shard's results from pytest's JUnit ($((SECONDS - t0)) s)"
		if [[ -n $gpugen ]]; then
			t0=$SECONDS
			rmc stage --name stage-c-8-gpu-b200 --labels run-on-blackwell,run-ci-short shard --number 1 test results export --path "$out/real-b200" &&
				json "$out/real-b200/summary.json" "$(statuses "['pass', 'fail', 'not-run']") and s['exit_code'] == 255" &&
				has "$out/real-b200/status.log" "[1/3] tests/e2e/gpu/test_a_pass.py  PASS"
			check $? "Miles' own runner, GPU-generation rules: run-on-blackwell dispatches the shard's tests to the B200 stage ($((SECONDS - t0)) s)"
		fi
	fi
fi

same "miles-ci run --dry-run --json = module spec, with the run facts of an Actions job" \
	GITHUB_ACTIONS=true GITHUB_RUN_ID=4242 GITHUB_RUN_ATTEMPT=2 GITHUB_WORKFLOW='PR "Test", e2e' \
	run --repo "$fx" --stage stage-b-2-gpu-h200 --labels run-ci-short --gpus none --dry-run --json -- \
	--source "$fx" --gpus none with-github-env --env GITHUB_RUN_ID=4242,GITHUB_RUN_ATTEMPT=2 --env '"GITHUB_WORKFLOW=PR ""Test"", e2e"' \
	stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 spec json
same "miles-ci run --dry-run --json = module spec" run --repo "$fx" --stage stage-c-4-gpu-mi350 --shard 1 --labels run-ci-amd \
	--pr-body-file "$out/body-sglang.md" --gpus none --dry-run --json -- \
	--source "$fx" --gpus none with-pull-request --body-file "$out/body-sglang.md" stage --name stage-c-4-gpu-mi350 --labels run-ci-amd shard --number 1 spec json
set -e
