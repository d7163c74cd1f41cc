# Results-you-can-trust checks of hack/e2e.sh (sourced after hack/e2e/stages.sh: uses
# dagger, ok, bad, check, json, has, $out, $fx, $engine, WANDB_API_KEY, HF_TOKEN). Each
# hostile case of hack/e2e/testdata/hostile runs through the module and `miles-ci run`
# and must give the right verdict, per-file outcomes and exit code, leave a complete
# results folder of regular files, and hold no secret value in any exported byte:
#   - a CUDA test that forges status lines, writes and bind-mounts /results/exit-code,
#     symlinks run.log to /etc/shadow, leaks the secret into the step summary, a file and
#     the log, floods 10 MB of progress and leaves `sleep infinity` holding the output;
#   - a runner that skips a planned file and exits 0 (a PR may change tests/ci too);
#   - single files killed by SIGKILL and exiting 124 (neither is a timeout);
#   - a ROCm test and a CPU test that leak the secret and fail (pytest's JUnit too);
#   - a CPU file failing at collection; a CPU JUnit report over its cap;
#   - a fork PR's run phase mounts no cache volume a later run reads;
#   - a secret too short to mask, refused before the run;
#   - with MILES_CI_E2E_SLOW=1 (two minutes), a hung runner ended by --timeout-minutes 1.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

set +e
hostile=hack/e2e/testdata/hostile
# tree NAME SRC DEST...: a copy of the stage fixture whose GPU, ROCm and CPU tests are
# replaced by hostile/SRC's files (DEST: gpu, amd or fast, per file prefix).
tree() {
	local t=$out/fx-$1
	rm -rf "$t" && cp -r "$fx" "$t" && rm -f "$t"/tests/e2e/gpu/*.py "$t"/tests/e2e/amd/*.py "$t"/tests/fast/*.py || return 1
	for f in "$hostile/$2"/*.py; do
		case $(basename "$f") in
		test_rocm_*) cp "$f" "$t/tests/e2e/amd/" ;;
		*) cp "$f" "$t/tests/$3/" ;;
		esac
	done
	echo "$t"
}
fxh=$(tree hostile gpu e2e/gpu)
fxs=$(tree skip skip e2e/gpu)
# A runner that leaves out the second planned file and still exits 0.
python3 - "$fxs/tests/ci/run_suite.py" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    for i, test in enumerate(tests, 1):\n"
assert old in s
open(p, "w").write(s.replace(old, old + "        if i == 2:\n            continue\n", 1))
PY
fxl=$(tree cpu-leak cpu-leak fast)
fxc=$(tree cpu-collect cpu-collect fast)
fxb=$(tree cpu-big cpu-big fast)
shadow=$(head -n 1 /etc/shadow 2>/dev/null || echo "no-shadow-on-this-host")

# mt TREE CALL-ARGS...: dagger call on TREE without GPUs, as mc does on the fixture.
mt() { local t=$1; shift; dagger call --source "$t" --gpus none "$@" >"$out/last.out" 2>"$out/last.log"; }
# cli TREE DIR ARGS...: miles-ci run on TREE into DIR (an earlier run's folder, with
# miles-ci's marker: a stale file put there first must be gone after); stdout and stderr to $out/last.out, $out/last.log; sets rc.
cli() {
	local t=$1 dir=$2
	shift 2
	mkdir -p "$dir" && echo stale >"$dir/stale.txt" && echo "an earlier run" >"$dir/.miles-ci-results"
	bash "$engine" run "$out/miles-ci" "$1" --repo "$t" "${@:2}" --gpus none --results "$dir" \
		--github-step-summary "$dir.md" >"$out/last.out" 2>"$out/last.log"
	rc=$?
}
# clean DIR: a complete results folder of regular files, nothing stale, no secret value
# in any byte of it, of the call's output, or of the step summary file DIR.md.
clean() {
	local d=$1 f
	for f in summary.json junit.xml run.log plan.txt status.log exit-code elapsed report.html; do
		[[ -f $d/$f && ! -L $d/$f ]] || { echo "$d/$f: missing or not a regular file" >&2; return 1; }
	done
	[[ ! -e $d/stale.txt ]] || { echo "$d/stale.txt: a file of an earlier run is left" >&2; return 1; }
	[[ -z $(find "$d" ! -type f ! -type d) ]] || { echo "$d holds a non-regular file: $(find "$d" ! -type f ! -type d)" >&2; return 1; }
	# shellcheck disable=SC2046 # unquoted on purpose: no word at all when there is no $d.md
	if grep -rqF -e "$WANDB_API_KEY" -e "$HF_TOKEN" "$d" "$out/last.out" "$out/last.log" $([[ -f $d.md ]] && echo "$d.md"); then
		echo "a secret value leaked: $(grep -rlF -e "$WANDB_API_KEY" -e "$HF_TOKEN" "$d" "$out/last.out" "$out/last.log" "$d.md" 2>/dev/null)" >&2
		return 1
	fi
	! grep -qF -- "$shadow" "$d/run.log" || { echo "$d/run.log holds the host's /etc/shadow" >&2; return 1; }
}
# forged DIR: what the hostile CUDA run must leave.
forged() {
	local d=$1
	json "$d/summary.json" "$(statuses "['fail', 'not-run', 'not-run']") and s['exit_code'] == 255 and s['verdict'] == 'inconsistent' and not s['passed']" &&
		has "$d/exit-code" 255 && has "$d/step-summary.md" "step summary secret: ***" && has "$d/artifacts/leak.txt" "artifact secret: ***" &&
		has "$d/run.log" "log secret: ***" "bytes of output cut here" &&
		[[ ! -e $d/artifacts/shadow-link && ! -e $d/artifacts/fifo && ! -e $d/artifacts/exit-code ]] && clean "$d" || return 1
	# The run ends when the runner ends, whatever `sleep infinity` holds.
	(($(cat "$d/elapsed") < 60)) || { echo "$d: the run took $(cat "$d/elapsed") s; sleep infinity kept it going" >&2; return 1; }
}

echo "=== RUN trust: a hostile CUDA test"
t0=$SECONDS
mt "$fxh" with-secrets --wandb-api-key env:WANDB_API_KEY stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 \
	test --run-id "$run-h" results export --path "$out/t-forge"
rc=$?
((rc == 0)) && forged "$out/t-forge" && ((SECONDS - t0 < 240))
check $? "trust (module): forged lines, a bind-mounted exit-code, a symlinked run.log, a flood and sleep infinity give FAIL, NOT-RUN, NOT-RUN, exit 255, nothing leaked ($((SECONDS - t0)) s)"
mt "$fxh" with-secrets --wandb-api-key env:WANDB_API_KEY stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test --run-id "$run-h" assert
rc=$?
((rc != 0)) && has "$out/last.log" "stage-b-2-gpu-h200 failed with exit code 255: tests/e2e/gpu/test_h1_forge.py (exit 1)" &&
	! grep -qF -- "$WANDB_API_KEY" "$out/last.log" "$out/last.out"
check $? "trust (module): assert fails the hostile run"
t0=$SECONDS
cli "$fxh" "$out/t-forge-cli" run --stage stage-b-2-gpu-h200 --labels run-ci-short
((rc == 255)) && forged "$out/t-forge-cli" && has "$out/last.out" "FAILED as inconsistent (exit code 255)" && ((SECONDS - t0 < 240))
check $? "trust (CLI): the hostile CUDA run exits 255 with the same results ($((SECONDS - t0)) s)"

echo "=== RUN trust: a runner that skips a planned file and exits 0"
mt "$fxs" stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test --run-id "$run-s" results export --path "$out/t-skip" &&
	json "$out/t-skip/summary.json" "$(statuses "['pass', 'not-run', 'not-run']") and s['exit_code'] == 0 and s['verdict'] == 'inconsistent' and not s['passed']" &&
	clean "$out/t-skip" &&
	! mt "$fxs" stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test --run-id "$run-s" assert &&
	has "$out/last.log" "inconsistent: the runner exited 0 but these planned files reported no outcome: tests/e2e/gpu/test_p2.py, tests/e2e/gpu/test_p3.py"
check $? "trust (module): a skipped file under exit 0 fails the run as inconsistent"
cli "$fxs" "$out/t-skip-cli" run --stage stage-b-2-gpu-h200 --labels run-ci-short
((rc == 1)) && clean "$out/t-skip-cli" && has "$out/last.out" "FAILED as inconsistent (exit code 0)"
check $? "trust (CLI): a skipped file under exit 0 exits 1"

echo "=== RUN trust: single files killed by SIGKILL or exiting 124"
mt "$fxh" file --path tests/e2e/gpu/test_k_sigkill.py test results export --path "$out/t-kill" &&
	json "$out/t-kill/summary.json" "$(statuses "['fail']") and s['signal'] == 9 and s['exit_code'] == 137 and s['tests'][0]['signal'] == 9 and s['verdict'] == 'failed'" &&
	clean "$out/t-kill"
check $? "trust (module): a file killed by SIGKILL is 'killed by signal 9', not a timeout"
cli "$fxh" "$out/t-kill-cli" file-run --file tests/e2e/gpu/test_k_sigkill.py
((rc == 137)) && has "$out/last.out" "killed by signal 9" && ! grep -q TIMEOUT "$out/last.out" && clean "$out/t-kill-cli"
check $? "trust (CLI): a file killed by SIGKILL exits 137"
mt "$fxh" file --path tests/e2e/gpu/test_k_exit124.py test results export --path "$out/t-124" &&
	json "$out/t-124/summary.json" "$(statuses "['fail']") and s['exit_code'] == 124 and s['tests'][0]['exit_code'] == 124 and s['verdict'] == 'failed'" &&
	clean "$out/t-124"
check $? "trust (module): a file exiting 124 fails with exit 124, not a timeout"
cli "$fxh" "$out/t-124-cli" file-run --file tests/e2e/gpu/test_k_exit124.py
((rc == 124)) && has "$out/last.out" "FAIL     tests/e2e/gpu/test_k_exit124.py" "exit 124" && ! grep -q TIMEOUT "$out/last.out" && clean "$out/t-124-cli"
check $? "trust (CLI): a file exiting 124 exits 124 as FAIL"

echo "=== RUN trust: the secret of a failing test on every backend"
mt "$fxh" with-secrets --wandb-api-key env:WANDB_API_KEY stage --name stage-c-4-gpu-mi350 --labels run-ci-amd shard --number 1 test results export --path "$out/t-rocm" &&
	json "$out/t-rocm/summary.json" "$(statuses "['fail']") and s['hw'] == 'rocm'" && has "$out/t-rocm/run.log" "rocm secret: ***" &&
	has "$out/t-rocm/step-summary.md" "rocm step summary secret: ***" && clean "$out/t-rocm"
check $? "trust (module): a failing ROCm test's secret is in no exported byte"
cli "$fxh" "$out/t-rocm-cli" run --stage stage-c-4-gpu-mi350 --shard 1 --labels run-ci-amd
((rc == 255)) && has "$out/t-rocm-cli/run.log" "rocm secret: ***" && clean "$out/t-rocm-cli"
check $? "trust (CLI): a failing ROCm test's secret is in no exported byte, exit 255"
mt "$fxl" with-secrets --hf-token env:HF_TOKEN stage --name stage-b-cpu shard --number 1 test results export --path "$out/t-cpu" &&
	json "$out/t-cpu/summary.json" "$(statuses "['fail', 'not-run']") and s['exit_code'] == 1" &&
	has "$out/t-cpu/junit.xml" 'classname="tests.fast.test_l1_leak"' "leak ***" && clean "$out/t-cpu"
check $? "trust (module): a failing CPU test's secret is in no exported byte, pytest's JUnit included"
cli "$fxl" "$out/t-cpu-cli" run --stage stage-b-cpu
((rc == 1)) && has "$out/t-cpu-cli/junit.xml" "leak ***" && clean "$out/t-cpu-cli"
check $? "trust (CLI): a failing CPU test's secret is in no exported byte, exit 1"
# The CUDA backend's failing test is the hostile one above (log, step summary, artifact).

echo "=== RUN trust: pytest's collection errors and a JUnit report over its cap"
mt "$fxc" stage --name stage-b-cpu shard --number 1 test results export --path "$out/t-collect" &&
	json "$out/t-collect/summary.json" "$(statuses "['not-run', 'fail', 'not-run']") and s['exit_code'] == 1" && clean "$out/t-collect"
check $? "trust (module): a file failing at collection is FAIL, the others NOT-RUN"
cli "$fxc" "$out/t-collect-cli" run --stage stage-b-cpu
((rc == 1)) && has "$out/last.out" "FAIL     tests/fast/test_c2_import.py" && clean "$out/t-collect-cli"
check $? "trust (CLI): a collection error exits as the runner did (1) with its file FAIL"
mt "$fxb" stage --name stage-b-cpu shard --number 1 test results export --path "$out/t-big" &&
	json "$out/t-big/summary.json" "$(statuses "['fail', 'not-run']") and any('more than the 16777216 miles-ci reads' in n for n in s['notes'])" &&
	has "$out/t-big/run.log" "bytes of output cut here" && clean "$out/t-big"
check $? "trust (module): a JUnit report over its cap is named, the outcomes come from pytest's -v lines"
cli "$fxb" "$out/t-big-cli" run --stage stage-b-cpu
((rc == 1)) && json "$out/t-big-cli/summary.json" "$(statuses "['fail', 'not-run']")" && clean "$out/t-big-cli"
check $? "trust (CLI): a JUnit report over its cap still gives a complete results folder, exit 1"

echo "=== RUN trust: a fork PR's run phase shares no cache"
# cachemounts ARGS...: how many cache volumes the shard's container (its run phase) mounts.
cachemounts() {
	mt "$fx" "$@" stage --name stage-b-cpu shard --number 1 container with-exec --args sh,-c,"grep -c ' /root/.cache/' /proc/mounts || true" stdout &&
		tr -d '[:space:]' <"$out/last.out"
}
n_fork=$(cachemounts with-pull-request --fork) && n_own=$(cachemounts) && [[ $n_fork == 0 && $n_own -gt 0 ]]
check $? "trust (module): a fork PR's run phase mounts no cache volume (fork: ${n_fork:-?}, own: ${n_own:-?})"

# Round 2 (issue 22): the nine cases, rebuilt here (docs/running.md, the trust model).
fxf=$(tree flood gpu-flood e2e/gpu)
fxn=$(tree names gpu-names e2e/gpu)
fxa=$(tree atexit cpu-atexit fast)
# named DIR: no file of DIR is named after a secret value.
named() { ! find "$1" -name "*$WANDB_API_KEY*" -o -name "*$HF_TOKEN*" | grep -q . || { echo "$1 holds a file named after a secret" >&2; return 1; }; }
# round2 LABEL FLOOD NAMES ATEXIT: cases 4-8 on these trees (the stand-in runner, or Miles').
round2() {
	local l=$1 f=$2 n=$3 a=$4
	echo "=== RUN trust ($l): 5,000 status-shaped lines of a passing test (case 4)"
	mt "$f" stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test results export --path "$out/t-$l-flood" &&
		json "$out/t-$l-flood/summary.json" "$(statuses "['pass', 'pass']") and s['verdict'] == 'passed' and s['exit_code'] == 0 and any('5000 lines shaped like status lines' in n for n in s['notes'])" &&
		clean "$out/t-$l-flood"
	check $? "trust ($l, module): a test that prints 5,000 status-shaped lines still passes"
	cli "$f" "$out/t-$l-flood-cli" run --stage stage-b-2-gpu-h200 --labels run-ci-short
	((rc == 0)) && clean "$out/t-$l-flood-cli"
	check $? "trust ($l, CLI): the same run exits 0"

	echo "=== RUN trust ($l): an atexit hook forges an all-pass junit.xml and exits 0 (case 5)"
	mt "$a" stage --name stage-b-cpu shard --number 1 test results export --path "$out/t-$l-atexit" &&
		json "$out/t-$l-atexit/summary.json" "$(statuses "['fail', 'not-run']") and s['exit_code'] == 0 and s['verdict'] == 'inconsistent' and any('pytest reported exit status 1' in n for n in s['inconsistent'])" &&
		clean "$out/t-$l-atexit"
	check $? "trust ($l, module): the failure pytest reported counts, the forged junit.xml does not"
	cli "$a" "$out/t-$l-atexit-cli" run --stage stage-b-cpu
	((rc == 1)) && has "$out/last.out" "FAIL     tests/fast/test_e1_atexit.py" && clean "$out/t-$l-atexit-cli"
	check $? "trust ($l, CLI): the same run exits 1 as inconsistent"

	echo "=== RUN trust ($l): 100,000 files, a secret and HTML in file names, commands in a skip reason (cases 6, 7, 8)"
	mt "$n" with-secrets --wandb-api-key env:WANDB_API_KEY stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 \
		test results export --path "$out/t-$l-names" &&
		json "$out/t-$l-names/summary.json" "$(statuses "['fail']") and len(open(sys.argv[1]).read()) < 65536 and any('not exported from /results, 99970 file(s)' in n and '<img src=x' in n and 'and 99950 more' in n for n in s['notes'])" &&
		(($(find "$out/t-$l-names/artifacts" -type f | wc -l) == 32)) && clean "$out/t-$l-names" && named "$out/t-$l-names"
	check $? "trust ($l, module): the left-out files are counted, no file is named after the secret"
	cli "$n" "$out/t-$l-names-cli" run --stage stage-b-2-gpu-h200 --labels run-ci-short --progress
	((rc == 255)) && clean "$out/t-$l-names-cli" && named "$out/t-$l-names-cli" &&
		! grep -qE '^[[:space:]]*::' "$out/last.out" && ! grep -q $'\x1b' "$out/last.out" && has "$out/last.out" 'flaky\n::error file=x::forged \x1b[31mred' &&
		(($(stat -c %s "$out/t-$l-names-cli.md") < 1048576)) && ! grep -qE '<img|<script|[^\\]\]\((https|javascript):' "$out/t-$l-names-cli.md"
	check $? "trust ($l, CLI): stdout holds no workflow command or escape, the step summary no HTML or link, no progress line the secret"
}
round2 stand-in "$fxf" "$fxn" "$fxa"

echo "=== RUN trust: a fork's verify_source_resolution.py cannot poison the caches (case 1)"
fxp=$out/fx-poison
rm -rf "$fxp" && cp -r "$fx" "$fxp" && cat >>"$fxp/tests/ci/verify_source_resolution.py" <<PY
import os
for d in ("/root/.cache/huggingface", "/root/.cache/pip", "/root/.cache/uv"):
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "miles-ci-poison-$run"), "w").write("poison")
PY
mt "$fxp" with-pull-request --fork stage --name stage-b-cpu shard --number 1 container with-exec --args true stdout &&
	mt "$fx" stage --name stage-b-cpu shard --number 1 container with-exec --args sh,-c,"ls -a /root/.cache/huggingface /root/.cache/pip /root/.cache/uv" stdout &&
	! grep -q "miles-ci-poison" "$out/last.out"
check $? "trust (module): a fork's checkout code writes nothing a trusted run's caches hold"

echo "=== RUN trust: --results never replaces what miles-ci did not make (case 3)"
scratch=$out/scratch/a/b
rm -rf "$out/scratch" && mkdir -p "$scratch" "$out/scratch/mine" && cp -r "$fxf" "$scratch/miles" && echo mine >"$out/scratch/mine/work.txt"
ok3=0
for dir in "$scratch/miles" "$scratch" . .. / "$HOME" "$out/scratch/mine"; do
	(cd "$scratch" && bash "$engine" run "$out/miles-ci" run --repo miles --stage stage-b-2-gpu-h200 --labels run-ci-short --gpus none --results "$dir") \
		>"$out/last.out" 2>"$out/last.log"
	rc=$?
	if ! { ((rc == 1)) && has "$out/last.log" "::error::--results" && ! grep -q "running on the Dagger engine" "$out/last.log"; }; then
		echo "--results $dir: exit $rc" >&2
		ok3=1
	fi
done
((ok3 == 0)) && test -f "$scratch/miles/tests/ci/run_suite.py" && test -f "$out/scratch/mine/work.txt"
check $? "trust (CLI): --results is refused before the run for the checkout, its parents, ., .., /, home and a folder miles-ci did not make"

echo "=== RUN trust: a --list-only that prints 300 MB (case 9)"
fxo=$(tree plan-flood skip e2e/gpu)
python3 - "$fxo/tests/ci/run_suite.py" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    if args.list_only:\n        return 0\n"
assert old in s
open(p, "w").write(s.replace(old, "    if args.list_only:\n        import sys as _s\n        _s.stdout.write('x' * (300 << 20))\n        return 0\n", 1))
PY
command time -f %M -o "$out/rss" bash "$engine" run "$out/miles-ci" run --repo "$fxo" --stage stage-b-2-gpu-h200 --labels run-ci-short --gpus none --quiet \
	>"$out/last.out" 2>"$out/last.log"
rc=$?
((rc == 125)) && has "$out/last.log" "printed more than the 1048576 bytes miles-ci reads" && (($(tail -n 1 "$out/rss") < 1048576))
check $? "trust (CLI): the plan step's output is cut at 1 MiB, exit 125 ($(tail -n 1 "$out/rss" 2>/dev/null) KiB at most)"

# Miles' own runner (MILES_CI_REAL_MILES, as in stages.sh): the same cases under it.
if [[ -n ${MILES_CI_REAL_MILES:-} && -f ${MILES_CI_REAL_MILES:-}/tests/ci/run_suite.py ]]; then
	# real TREE: TREE with Miles' tests/ci in place of the stand-in runner.
	real() {
		local t=$1-real
		rm -rf "$t" && cp -r "$1" "$t" && cp -r "$MILES_CI_REAL_MILES/tests/ci/." "$t/tests/ci/" &&
			find "$t/tests/ci" -name 'test_*.py' -delete && cp "$1/tests/ci/verify_source_resolution.py" "$1/tests/ci/requirements-ci-cpu.txt" "$t/tests/ci/" &&
			rm -f "$t/tests/ci/run_suite_defaults.json" && echo "$t"
	}
	round2 miles "$(real "$fxf")" "$(real "$fxn")" "$(real "$fxa")"
fi

echo "=== RUN docs: hack/run.sh --pr N with the GitHub API stand-in (docs/running.md)"
MILES_CI_GITHUB_STANDIN=testdata/github bash hack/run.sh --pr 2874 --stage stage-c-4-gpu-h200 --shard 1 --dry-run \
	>"$out/last.out" 2>"$out/last.log" &&
	has "$out/last.log" "::notice::trigger facts of pull request radixark/miles#2874" && has "$out/last.out" "stage-c-4-gpu-h200 shard 1/3"
check $? "docs: hack/run.sh --pr 2874 reaches the GitHub API stand-in started in its namespace"

echo "=== RUN docs: the README's quick start, as written"
# The first command of the README and the output it shows, run from a scratch folder
# so its results/ lands there.
readme_cmd='bash hack/run.sh --stage stage-c-4-gpu-h200 --shard 1 --labels run-ci-megatron --gpus none --results results'
python3 - "$readme_cmd" README.md >"$out/readme-want" <<'PY'
import sys
cmd, text = sys.argv[1], open(sys.argv[2]).read()
rest = text[text.index(cmd + "\n```"):]
block = rest.split("```", 3)[2]  # the next fenced block after the command's own
print(block.strip("\n").removeprefix("\n"))
PY
mkdir -p "$out/readme" && (cd "$out/readme" && bash "$repo/hack/run.sh" --stage stage-c-4-gpu-h200 --shard 1 --labels run-ci-megatron \
	--gpus none --results results) >"$out/readme-got" 2>"$out/last.log"
rc=$?
# (a file's seconds may differ by one)
((rc == 0)) && diff -u <(sed -E 's/  [0-9]+s$/  Ns/' "$out/readme-want") <(sed -E 's/  [0-9]+s$/  Ns/' "$out/readme-got") >&2 &&
	test -f "$out/readme/results/summary.json"
check $? "docs: the README's quick start prints what the README shows"

# Opt-in (it waits a minute per run): a runner that hangs is ended by the stage's timeout.
if [[ -n ${MILES_CI_E2E_SLOW:-} ]]; then
	echo "=== RUN trust: the stage timeout ends a hung runner"
	fxt=$(tree hang skip e2e/gpu)
	python3 - "$fxt/tests/ci/run_suite.py" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    for i, test in enumerate(tests, 1):\n"
assert old in s
open(p, "w").write(s.replace(old, "    import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(10**6)\n" + old, 1))
PY
	t0=$SECONDS
	mt "$fxt" stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test --timeout-minutes 1 results export --path "$out/t-hang" &&
		json "$out/t-hang/summary.json" "$(statuses "['timeout', 'not-run', 'not-run']") and s['verdict'] == 'timeout' and s['exit_code'] == 124 and s['timeout_s'] == 60" &&
		clean "$out/t-hang"
	check $? "trust (module): --timeout-minutes 1 ends a hung runner as TIMEOUT, TERM ignored ($((SECONDS - t0)) s)"
	t0=$SECONDS
	cli "$fxt" "$out/t-hang-cli" run --stage stage-b-2-gpu-h200 --labels run-ci-short --timeout-minutes 1
	((rc == 124)) && has "$out/last.out" "TIMEOUT (miles-ci ended the run after 60s)" && clean "$out/t-hang-cli"
	check $? "trust (CLI): --timeout-minutes 1 ends a hung runner, exit 124 ($((SECONDS - t0)) s)"

	echo "=== RUN trust: a sitecustomize.py that sleeps cannot stretch the run (case 2)"
	fxz=$out/fx-sleep
	rm -rf "$fxz" && cp -r "$fx" "$fxz" &&
		printf 'import os, time
if os.environ.get("MILES_CI_RUN_ID"):
    time.sleep(200)
' >"$fxz/sitecustomize.py"
	t0=$SECONDS
	mt "$fxz" stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test --timeout-minutes 1 results export --path "$out/t-sleep" &&
		json "$out/t-sleep/summary.json" "s['verdict'] == 'timeout' and s['exit_code'] == 124" && clean "$out/t-sleep" && ((SECONDS - t0 < 190))
	check $? "trust (module): a sleeping sitecustomize.py ends as TIMEOUT by the deadline ($((SECONDS - t0)) s)"
	t0=$SECONDS
	cli "$fxz" "$out/t-sleep-cli" run --stage stage-b-2-gpu-h200 --labels run-ci-short --timeout-minutes 1
	((rc == 124)) && clean "$out/t-sleep-cli" && ((SECONDS - t0 < 190))
	check $? "trust (CLI): a sleeping sitecustomize.py ends as TIMEOUT, exit 124 ($((SECONDS - t0)) s)"
fi

echo "=== RUN trust: a secret too short to mask"
WANDB_API_KEY=short bash "$engine" run "$out/miles-ci" run --repo "$fx" --stage stage-b-2-gpu-h200 --labels run-ci-short --gpus none \
	>"$out/last.out" 2>"$out/last.log"
rc=$?
((rc == 1)) && has "$out/last.log" "secret WANDB_API_KEY is (or has a line) shorter than 8 characters"
check $? "trust (CLI): a secret shorter than 8 characters is refused before the run"
SHORT_SECRET=short mt "$fx" with-secrets --wandb-api-key env:SHORT_SECRET stage --name stage-b-2-gpu-h200 --labels run-ci-short shard --number 1 test exit-code
rc=$?
((rc != 0)) && has "$out/last.log" "secret WANDB_API_KEY is (or has a line) shorter than 8 characters"
check $? "trust (module): a secret shorter than 8 characters is refused before the run"
set -e
