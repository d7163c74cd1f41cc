# Re-running what failed and triage (docs/when-ci-fails.md, issue 33), checks of hack/e2e.sh
# (sourced by it: uses dagger, ok, bad, $out, $engine) on the tree of hack/e2e/ci-fixture.sh as a
# git checkout:
#   - `ci` with one failing stage-a-cpu shard (an untracked marker file makes test_a1 fail,
#     so the commit stays the same), then `ci --rerun-failed`: only that shard and the GPU stage
#     its failure skipped run (attempt 2), the other shards are reused (attempt 1) and their
#     results folders are byte for byte the first run's;
#   - a results folder of another event, or another commit, is refused (exit 2) naming it;
#   - the module's `ci ... run --rerun-failed` does the same with the folder it exported;
#   - `triage` on planted tests (testdata/triage): regression (fails only at the head),
#     pre-existing (fails at both), flaky (fails on a seed drawn from GITHUB_RUN_ATTEMPT,
#     about half the time), not-reproduced (passes); the attempts land in the history, and
#     `history flaky` shows the flaky verdict; the module's triage of the flaky file agrees.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

set +e
fxg=$out/fx-rerun
# shellcheck source=hack/e2e/ci-fixture.sh
source hack/e2e/ci-fixture.sh
gitq() { git -C "$1" -c user.name=e2e -c user.email=e2e@example.com -c commit.gpgsign=false "${@:2}"; }
printf 'import os\n\nfrom tests.ci.ci_register import register_cpu_ci\n\nregister_cpu_ci(est_time=5, suite="stage-a-cpu")\n\n\ndef test_ok():\n    assert not os.path.exists(os.path.join(os.path.dirname(__file__), "fail-a1")), "the marker fail-a1 is there"\n' \
	>"$fxg/tests/fast/test_a1.py"
gitq "$fxg" init -q -b main && gitq "$fxg" add -A && gitq "$fxg" commit -q -m fixture
touch "$fxg/tests/fast/fail-a1"
rrcheck() { # rrcheck RC NAME
	if (($1 == 0)); then ok "$2"; else tail -n 30 "$out/rr.log" "$out/rr.out"; bad "$2"; fi
}
rr() { # rr ARGS...: miles-ci ci on the tree; stdout in $out/rr.out, stderr in $out/rr.log, exit in rc
	bash "$engine" run "$out/miles-ci" ci --repo "$fxg" --gpus none --quiet --pr-labels-json '["run-ci-megatron"]' \
		--changed-files "$out/ci-changed" --only stage-a-cpu stage-b-2-gpu-h200 "$@" >"$out/rr.out" 2>"$out/rr.log"
	rc=$?
}
# kept DIR: a digest of every file of the shards DIR's summary.json says passed in attempt 1.
kept() {
	python3 - "$1" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
for j in s["jobs"]:
    if j["kind"] == "stage" and j["state"] == "passed" and j.get("run_attempt", 1) == 1:
        sd = os.path.join(d, j["results"])
        for root, _, files in sorted(os.walk(sd)):
            for f in sorted(files):
                p = os.path.join(root, f)
                print(hashlib.sha256(open(p, "rb").read()).hexdigest(), os.path.relpath(p, d))
PY
}

echo "=== RUN miles-ci ci --rerun-failed: only the failed shard and its dependents run again"
rr --event pull_request --results "$out/rr"
first=$rc
failedshard=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(" ".join("%s#%s" % (j["stage"], j["shard"]) for j in s["jobs"] if j["state"] == "failed"))' "$out/rr/summary.json")
kept "$out/rr" >"$out/rr.kept1"
rm -f "$fxg/tests/fast/fail-a1"
rr --event pull_request --rerun-failed "$out/rr"
kept "$out/rr" >"$out/rr.kept2"
((first == 1 && rc == 0)) && [[ $(wc -w <<<"$failedshard") == 1 ]] && cmp -s "$out/rr.kept1" "$out/rr.kept2" && test -s "$out/rr.kept1" &&
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
failed = sys.argv[2]
by = {(j.get("stage") or j["job"]) + ("#%d" % j["shard"] if j["shard"] is not None else ""): j for j in s["jobs"]}
assert s["run_attempt"] == 2 and s["run"]["commit"], s.get("run")
assert by[failed]["run_attempt"] == 2 and not by[failed].get("reused"), by[failed]
for k, j in by.items():
    if j["kind"] == "stage" and k != failed and j["stage"] == "stage-a-cpu":
        assert j.get("reused") and j["run_attempt"] == 1, (k, j)
b = by["stage-b-2-gpu-h200"]
assert b["state"] == "passed" and b["run_attempt"] == 2 and not b.get("reused"), b' "$out/rr/summary.json" "$failedshard" &&
	[[ $(grep -c "stage-a-cpu.* running" "$out/rr.log") == 1 ]] && grep -q "reused (attempt 1)" "$out/rr.out" && grep -q "attempt 2 re-ran" "$out/rr.out" &&
	grep -q 'data-verdict="passed"' "$out/rr/report.html" && grep -q "reused (attempt 1)" "$out/rr/report.html"
rrcheck $? "miles-ci ci --rerun-failed: $failedshard and stage-b-2-gpu-h200 ran as attempt 2; the passed shards reused, their files byte for byte ($(wc -l <"$out/rr.kept1") files); report.html is attempt 2's"

echo "=== RUN miles-ci ci --rerun-failed: nothing to re-run, another event, another commit"
cp -r "$out/rr" "$out/rr-again"
rr --event pull_request --rerun-failed "$out/rr-again"
((rc == 0)) && grep -q "nothing to re-run" "$out/rr.log" && diff -r -q "$out/rr" "$out/rr-again" >/dev/null
rrcheck $? "miles-ci ci --rerun-failed: nothing to re-run keeps the folder and the verdict (exit 0)"
rr --event schedule --schedule '0 15 * * 0-5' --rerun-failed "$out/rr"
((rc == 2)) && grep -q "event: pull_request then, schedule now" "$out/rr.log"
rrcheck $? "miles-ci ci --rerun-failed: a folder of another event is refused naming it (exit 2)"
printf 'another\n' >"$fxg/ANOTHER.md" && gitq "$fxg" add -A && gitq "$fxg" commit -q -m another
rr --event pull_request --rerun-failed "$out/rr"
((rc == 2)) && grep -q "checkout commit: [0-9a-f]* then, [0-9a-f]* now" "$out/rr.log"
rrcheck $? "miles-ci ci --rerun-failed: a folder of another commit is refused naming both (exit 2)"
gitq "$fxg" reset -q --hard HEAD^

echo "=== RUN module: ci ... run --rerun-failed"
touch "$fxg/tests/fast/fail-a1"
mod() { # mod DEST [ARGS...]: the module's ci run on the tree, results exported to DEST
	local dest=$1
	shift
	dagger call --source "$fxg" --gpus none with-pull-request --head-sha 0123456789abcdef0123456789abcdef01234567 ci --event pull_request --pr-labels run-ci-megatron \
		--changed-files "$out/ci-changed" --only stage-a-cpu run "$@" results export --path "$dest" >"$out/rr.out" 2>"$out/rr.log"
}
mod "$out/rrm" --run-id rr-module-1
# The same run (its shards' steps cached by the run id): its summary ends with the failed
# shard, its first failing file and its run.log inside results, as miles-ci ci's table does.
dagger call --source "$fxg" --gpus none with-pull-request --head-sha 0123456789abcdef0123456789abcdef01234567 ci --event pull_request --pr-labels run-ci-megatron \
	--changed-files "$out/ci-changed" --only stage-a-cpu run --run-id rr-module-1 summary >"$out/rr.out" 2>"$out/rr.log" &&
	grep -q "^failed: .*stage-a-cpu.*: tests/fast/.* fail" "$out/rr.out" &&
	grep -q "^    run.log: stage-a-cpu/[0-9]-of-4/run.log$" "$out/rr.out"
rrcheck $? "module: ci ... run's summary lists the failed shard, its first failing file and its run.log"
rm -f "$fxg/tests/fast/fail-a1"
mod "$out/rrm2" --rerun-failed "$out/rrm" &&
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
st = [j for j in s["jobs"] if j["kind"] == "stage" and j["state"] != "excluded"]
assert s["run_attempt"] == 2 and all(j["state"] == "passed" for j in st), s
assert sum(1 for j in st if j.get("reused")) == len(st) - 1, st' "$out/rrm2/summary.json"
rrcheck $? "module: ci ... run --rerun-failed re-runs the failed shard, reuses the rest"

echo "=== RUN miles-ci triage: regression, pre-existing, flaky, not-reproduced"
fxt=$out/fx-triage
rm -rf "$fxt" && cp -r "$fxg" "$fxt" && rm -rf "$fxt/.git" && cp hack/e2e/testdata/triage/*.py "$fxt/tests/fast/" &&
	gitq "$fxt" init -q -b main && gitq "$fxt" add -A && gitq "$fxt" commit -q -m base &&
	gitq "$fxt" checkout -q -b change &&
	printf '\n\ndef test_changed():\n    assert False, "the change broke it"\n' >>"$fxt/tests/fast/test_t_regress.py" &&
	gitq "$fxt" commit -q -am change
bash "$engine" run "$out/miles-ci" triage --repo "$fxt" --base main --gpus none --quiet --out "$out/tri" --record --db "$out/tri.db" \
	--file tests/fast/test_t_regress.py tests/fast/test_t_pre.py tests/fast/test_t_flaky.py tests/fast/test_t_ok.py >"$out/rr.out" 2>"$out/rr.log"
rc=$?
((rc == 1)) &&
	grep -q "^tests/fast/test_t_regress.py  regression  head 0 pass / 3 fail, base 3 pass / 0 fail" "$out/rr.out" &&
	grep -q "^tests/fast/test_t_pre.py  pre-existing  head 0 pass / 3 fail, base 0 pass / 1 fail" "$out/rr.out" &&
	grep -q "^tests/fast/test_t_flaky.py  flaky  head 1 pass / 1 fail" "$out/rr.out" &&
	grep -q "^tests/fast/test_t_ok.py  not-reproduced  head 3 pass / 0 fail" "$out/rr.out" &&
	test -s "$out/tri/tests__fast__test_t_regress/base-3/run.log" && test -s "$out/tri/triage.json" &&
	grep -q "recorded 15 triage attempt(s)" "$out/rr.log" && grep -q '<table id="verdicts">' "$out/tri/report.html" &&
	grep -q '<a href="tests__fast__test_t_regress/base-3/run.log">' "$out/tri/report.html"
rrcheck $? "miles-ci triage: the four verdicts on planted tests, each attempt's run.log, 15 attempts recorded, the verdict table in report.html"
bash "$engine" run "$out/miles-ci" history flaky --db "$out/tri.db" >"$out/rr.out" 2>"$out/rr.log"
grep -q "tests/fast/test_t_flaky.py (CPU, stage-a-cpu).*: flaky (head 1 pass / 1 fail)" "$out/rr.out" && ! grep -q test_t_regress "$out/rr.out"
rrcheck $? "miles-ci history flaky: the triage's flaky verdict, read back from its attempts"

echo "=== RUN module: triage"
rm -rf "$out/fx-triage-base" && mkdir -p "$out/fx-triage-base" && gitq "$fxt" archive main | tar -x -C "$out/fx-triage-base"
dagger call --source "$fxt" --gpus none with-pull-request --head-sha "$(gitq "$fxt" rev-parse HEAD)" triage --file tests/fast/test_t_flaky.py,tests/fast/test_t_regress.py \
	--base "$out/fx-triage-base" --base-sha "$(gitq "$fxt" rev-parse main)" verdicts >"$out/rr.out" 2>"$out/rr.log" &&
	grep -q "^tests/fast/test_t_flaky.py  flaky  head 1 pass / 1 fail" "$out/rr.out" &&
	grep -q "^tests/fast/test_t_regress.py  regression" "$out/rr.out"
rrcheck $? "module: triage gives the CLI's verdicts"
