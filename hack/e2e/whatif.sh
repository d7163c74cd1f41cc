# The what-if and the scheduler's order, measured (issue 42's "Done when"), checks of
# hack/e2e.sh (sourced by it: uses ok, bad, $out, $engine) on the tree of
# hack/e2e/ci-fixture.sh with tests that sleep (CPU 2-4 s, GPU 4-16 s: long enough that
# the set-up noise does not swamp them, short enough for a suite of about 3 minutes), each
# registered with its sleep as est_time:
#   - on one stand-in 8-GPU host (--gpus none:0-7), the PR graph's span is within 1.15x of
#     its lower bound (summary.json's timeline);
#   - `ci --what-if` of that run (the same tree and flags, the history it recorded) predicts
#     a span within 15% of the measured one, and the lower bound exceeds neither;
#   - a fleet of hosts that do not exist (two H200 hosts, an H100 and an MI350 host,
#     engines nowhere) gets a complete prediction, every GPU shard on a host of its model, in a
#     shorter span than the one host; its report.html loads in Chromium with the timeline;
#   - history predictions lists the run with the span it predicted before it started.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

set +e
fxg=$out/fx-whatif
# shellcheck source=hack/e2e/ci-fixture.sh
source hack/e2e/ci-fixture.sh
# sleeping KIND SUITE NAME SECONDS: a passing test of SUITE that takes SECONDS, its est_time.
sleeping() {
	local f
	case $1 in
	cpu)
		f=$fxg/tests/fast/test_$3.py
		printf 'import time\n\nfrom tests.ci.ci_register import register_cpu_ci\n\nregister_cpu_ci(est_time=%s, suite="%s")\n\n\ndef test_ok():\n    time.sleep(%s)\n' "$4" "$2" "$4" >"$f"
		;;
	*)
		f=$fxg/tests/e2e/$([[ $1 == rocm ]] && echo amd || echo gpu)/test_$3.py
		printf 'import time\n\nfrom tests.ci.ci_register import register_%s_ci\n\nregister_%s_ci(est_time=%s, suite="%s", labels=[%s])\n\nif __name__ == "__main__":\n    time.sleep(%s)\n' \
			"$1" "$1" "$4" "$2" "$([[ $1 == rocm ]] && echo "\"amd\", \"megatron\"" || echo "\"megatron\"")" "$4" >"$f"
		;;
	esac
}
i=0
for s in 3 2 4 2; do sleeping cpu stage-a-cpu "a$i" "$s"; i=$((i + 1)); done
sleeping cpu stage-b-cpu b0 3
sleeping cuda stage-b-2-gpu-h200 b2h200 12
sleeping cuda stage-c-2-gpu-h200 c2h200_0 16
sleeping cuda stage-c-2-gpu-h200 c2h200_1 8
sleeping cuda stage-c-4-gpu-h200 c4h200_0 12
sleeping cuda stage-c-4-gpu-h200 c4h200_1 8
sleeping cuda stage-c-4-gpu-h200 c4h200_2 4
sleeping cuda stage-c-8-gpu-h200 c8h200_0 6
sleeping cuda stage-c-8-gpu-h200 c8h200_1 4
sleeping rocm stage-c-4-gpu-mi350 mi350_0 10
sleeping rocm stage-c-4-gpu-mi350 mi350_1 6
wdb=$out/whatif-history.db
# wi ARGS...: miles-ci ci on the tree as one PR, stdout in $out/wi.out, stderr in $out/wi.log.
wi() {
	bash "$engine" run "$out/miles-ci" ci --repo "$fxg" --event pull_request --pr-labels-json '["run-ci-megatron"]' \
		--changed-files "$out/ci-changed" --quiet "$@" >"$out/wi.out" 2>"$out/wi.log"
}
wicheck() { # wicheck RC NAME
	if (($1 == 0)); then ok "$2"; else tail -n 30 "$out/wi.log" "$out/wi.out"; bad "$2"; fi
}

echo "=== RUN miles-ci ci: the PR graph on one stand-in 8-GPU host, its span against its lower bound"
wi --gpus none:0-7 --results "$out/wi-run" --record --db "$wdb"
rc=$?
span=$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["timeline"]; print(t["span_s"])' "$out/wi-run/summary.json" 2>/dev/null)
python3 - "$out/wi-run/summary.json" >"$out/wi.ratio" 2>&1 <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["timeline"]
gpu = [j for j in s["jobs"] if j["kind"] == "stage" and j["gpus"] > 0]
ran = all(j["state"] == "passed" for j in s["jobs"] if j["kind"] == "stage" and j["state"] != "skipped")
print(f'span {t["span_s"]:.0f} s, lower bound {t["lower_bound_s"]:.0f} s ({t["binds"]}): {t["ratio"]:.2f}x; {len(gpu)} GPU shards')
sys.exit(0 if ran and len(gpu) >= 10 and t["lower_bound_s"] <= t["span_s"] and t["ratio"] <= 1.15 else 1)
PY
r=$?
((rc == 0 && r == 0)) && grep -q "^timeline: span " "$out/wi.out" && grep -q "recorded the attempts of" "$out/wi.log"
wicheck $? "miles-ci ci: one stand-in 8-GPU host runs the PR graph within 1.15x of its lower bound ($(cat "$out/wi.ratio"))"

echo "=== RUN miles-ci ci --what-if: the recorded run predicted from its history"
wi --gpus none:0-7 --what-if --db "$wdb" --events schedule local --json
cp "$out/wi.out" "$out/wi-one.json"
python3 - "$out/wi-one.json" "$span" >"$out/wi.pred" 2>&1 <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
t, measured = p["timeline"], float(sys.argv[2])
err = (t["span_s"] - measured) / measured
print(f'predicted {t["span_s"]:.0f} s against {measured:.0f} s measured ({err:+.0%}), lower bound {t["lower_bound_s"]:.0f} s')
ok = abs(err) <= 0.15 and t["lower_bound_s"] <= t["span_s"] and not p["cannot_run"] and all(s["files_from_est_time"] == 0 for s in p["shards"])
sys.exit(0 if ok else 1)
PY
wicheck $? "miles-ci ci --what-if: the prediction of the recorded run is within 15% of its span ($(cat "$out/wi.pred"))"

echo "=== RUN miles-ci ci --what-if: a fleet of hosts that do not exist"
cat >"$out/wi-fleet.yml" <<'EOF2'
- {name: h200-a, engine: "tcp://h200-a.invalid:8080", gpus: "h200:0-7"}
- {name: h200-b, engine: "tcp://h200-b.invalid:8080", gpus: "h200:0-7"}
- {name: h100-a, engine: "tcp://h100-a.invalid:8080", gpus: "h100:0-7"}
- {name: mi350-a, engine: "tcp://mi350-a.invalid:8080", gpus: "mi350:0-7", cpu: false}
EOF2
wi --hosts "$out/wi-fleet.yml" --what-if --db "$wdb" --events schedule local --json --results "$out/wi-fleet"
cp "$out/wi.out" "$out/wi-fleet.json"
python3 - "$out/wi-fleet.json" "$out/wi-one.json" >"$out/wi.fleet" 2>&1 <<'PY'
import json, sys
p, one = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
model = {"h200-a": "h200", "h200-b": "h200", "h100-a": "h100", "mi350-a": "mi350"}
gpu = [s for s in p["shards"] if s["gpus"] > 0]
placed = all(model.get(s.get("host")) == s.get("gpu_model") for s in gpu)
print(f'{len(gpu)} GPU shards on hosts of their model: {placed}; span {p["timeline"]["span_s"]:.0f} s against {one["timeline"]["span_s"]:.0f} s on one host')
sys.exit(0 if placed and len(gpu) >= 10 and not p["cannot_run"] and p["timeline"]["span_s"] < one["timeline"]["span_s"] else 1)
PY
r=$?
page=$out/wi-fleet/report.html
if chromium=$(bash hack/chromium.sh </dev/null); then
	timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$(mktemp -d -p "$out")" --host-resolver-rules="MAP * ~NOTFOUND" \
		--virtual-time-budget=5000 --dump-dom "file://$page" >"$out/wi-dom.html" 2>/dev/null &&
		grep -q '<svg id="timeline"' "$out/wi-dom.html" && grep -q 'a prediction: nothing ran' "$out/wi-dom.html" && grep -q '>h200-b H200 7<' "$out/wi-dom.html"
	r=$((r + $?))
else
	r=1
fi
wicheck $r "miles-ci ci --what-if: hosts that do not exist get a complete prediction, each GPU shard on a host of its model, sooner than one host ($(cat "$out/wi.fleet")); its page draws the timeline in Chromium"

echo "=== RUN miles-ci history predictions: the run against the prediction it made"
bash "$engine" run "$out/miles-ci" history predictions --db "$wdb" >"$out/wi.out" 2>"$out/wi.log" &&
	grep -q "^run [0-9]* attempt 1 (.*): [0-9]* shard(s), span [0-9]* s, predicted [0-9]* s (" "$out/wi.out"
wicheck $? "miles-ci history predictions: the recorded run with the span it predicted ($(head -n 1 "$out/wi.out"))"
set -e
