# `miles-ci ci` checks of hack/e2e.sh (sourced by it: uses dagger, same, ok, bad, $out,
# $engine, $fixture): the whole PR graph of the fixture runs on stand-ins (--gpus none): every job passes,
# the results folder holds each shard's results and the run's summary.json and junit.xml,
# and shards of one stage reuse their dependency layers.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

set +e
if [[ -f $fixture/diffs/cpu_only.z ]]; then
	cp "$fixture/diffs/cpu_only.z" "$out/ci-changed"
else
	printf 'M\0tests/fast/test_x.py\0' >"$out/ci-changed"
fi
echo "=== RUN miles-ci ci: the whole PR graph on stand-ins"
t0=$SECONDS
bash "$engine" run "$out/miles-ci" ci --repo "$fixture" --event pull_request --pr-labels-json '["run-ci-megatron"]' \
	--changed-files "$out/ci-changed" --gpus none --quiet --results "$out/ci" >"$out/ci.out" 2>"$out/ci.log"
rc=$?
wall=$((SECONDS - t0))
if ((rc == 0)) && python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
shards = [j for j in s["jobs"] if j["kind"] == "stage" and j["state"] != "skipped"]
ok = not s["cancelled"] and shards and all(j["state"] == "passed" for j in shards)
busy = sum(j["duration_s"] for j in shards)
print(f"{len(shards)} shards, {busy:.0f} s of shard time", file=sys.stderr)
sys.exit(0 if ok else 1)' "$out/ci/summary.json" && test -s "$out/ci/junit.xml" -a -s "$out/ci/stage-a-cpu/3/summary.json" &&
	grep -q "dependency layers:" "$out/ci.out"; then
	ok "miles-ci ci: every shard of the PR graph passed on stand-ins ($wall s wall; $(grep "dependency layers:" "$out/ci.out"))"
else
	tail -n 40 "$out/ci.log" "$out/ci.out"
	bad "miles-ci ci: the whole PR graph on stand-ins (exit $rc)"
fi
set -e
