# Hosts that know their GPUs (docs/hosts.md, rules §14), checks of hack/e2e.sh (sourced by it:
# uses ok, bad, $out, $engine) on the tree of hack/e2e/ci-fixture.sh:
#   - a --hosts file of two hosts (two names for this engine, with H200 and MI350 stand-ins)
#     and an unreachable third (H100) runs one PR graph: each shard on a host of its kind, one
#     summary; the H100 shards are not run, their reason naming the host that is down;
#   - two `miles-ci ci` runs started together on none:h200:0-3 never hold one device at the
#     same time (their summaries' devices and times say so), and one of them waited;
#   - two hosts of a fleet that split one machine (none:h200:0-1, none:h200:2-3) run a whole-host
#     shard each at once (their host-wide lock files are their own);
#   - two `miles-ci run`s on --visible-devices 0,1 and 00,01 take the same devices, one after the
#     other, and the container sees CUDA_VISIBLE_DEVICES=0,1;
#   - a killed run frees its devices at once: the other run's shard starts within seconds;
#   - hosts that fail are down: an engine that refuses the connection is down in seconds, one
#     that fails fast (docker-container://no-such-engine) is down without a panic, one that dies
#     mid-run (a socket proxy to the engine, killed) is down at once and its shard runs on the
#     other host, and the run ends within 10 s of printing its results; Ctrl-C ends a fleet run
#     within 2 s (exit 130, the summary kept); no `dagger session` outlives any of these runs.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

set +e
fxg=$out/fx-hosts
# shellcheck source=hack/e2e/ci-fixture.sh
source hack/e2e/ci-fixture.sh
locks=$out/locks
mkdir -p "$locks"
hostsrun() { # hostsrun NAME ARGS...: miles-ci ci on the tree, output in $out/NAME.out and .log
	local name=$1
	shift
	bash "$engine" run "$out/miles-ci" ci --repo "$fxg" --event pull_request --quiet --lock-dir "$locks" \
		--pr-labels-json '["run-ci-megatron","bypass-fastfail"]' --changed-files "$out/ci-changed" "$@" >"$out/$name.out" 2>"$out/$name.log"
}
hostscheck() { # hostscheck RC NAME LOG...
	local rc=$1 name=$2
	shift 2
	if ((rc == 0)); then ok "$name"; else tail -n 20 "$@"; bad "$name"; fi
}

echo "=== RUN miles-ci ci --hosts: one graph across hosts of different kinds, one of them down"
cat >"$out/hosts.yml" <<EOF
- {name: h200-a, gpus: "none:h200:0-7"}
- {name: mi350-x, gpus: "none:mi350:0-3", engine: "docker-container://no-such-engine", cpu: false}
- {name: mi350-b, gpus: "none:mi350:0-3", engine: "${_EXPERIMENTAL_DAGGER_RUNNER_HOST}"}
- {name: h100-c, gpus: "none:h100:0-7", engine: "tcp://127.0.0.1:9"}
EOF
hostsrun fleet --hosts "$out/hosts.yml" --results "$out/fleet"
rc=$?
((rc == 125)) && python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
want = {"h200": "h200-a", "mi350": "mi350-b"}
bad = []
for j in s["jobs"]:
    if j["kind"] != "stage" or j["state"] == "skipped":
        continue
    m = j.get("gpu_model", "")
    if m == "h100":
        if j["state"] != "not-run" or "h100-c: 8 H100" not in j["reason"] or "down: host h100-c" not in j["reason"]:
            bad.append(("h100 not run naming the down host", j))
    elif j["state"] != "passed" or j.get("host") != want.get(m, j.get("host")) or not j.get("host"):
        bad.append(("passed on a host of its kind", j))
names = [h["name"] for h in s.get("hosts", [])]
if names != ["h200-a", "mi350-x", "mi350-b", "h100-c"]:
    bad.append(("the four hosts in the summary", names))
for b in bad:
    print("wanted", b[0], "got", b[1], file=sys.stderr)
sys.exit(1 if bad else 0)' "$out/fleet/summary.json" && test -s "$out/fleet/stage-c-4-gpu-mi350/2-of-2/run.log" && grep -q "on mi350-b" "$out/fleet.out"
hostscheck $? "miles-ci ci --hosts: every shard on a host of its kind (the MI350 ones past the host whose engine fails fast), one summary, the down host's H100 shards not run with the reason (exit $rc)" "$out/fleet.log" "$out/fleet.out"

# The GPU tests hold their devices a few seconds, so that two runs contend.
for f in "$fxg"/tests/e2e/gpu/test_*.py; do
	printf '    import time\n    time.sleep(3)\n' >>"$f"
done
echo "=== RUN two miles-ci ci runs on one host never hold one device at once"
t0=$SECONDS
hostsrun two-a --gpus none:h200:0-3 --only stage-c-2-gpu-h200 stage-c-4-gpu-h200 --results "$out/two-a" &
pa=$!
hostsrun two-b --gpus none:h200:0-3 --only stage-c-2-gpu-h200 stage-c-4-gpu-h200 --results "$out/two-b" &
pb=$!
wait "$pa"
ra=$?
wait "$pb"
rb=$?
((ra == 0 && rb == 0)) && python3 -c 'import json, sys
from datetime import datetime
held = []
for run, path in (("a", sys.argv[1]), ("b", sys.argv[2])):
    for j in json.load(open(path))["jobs"]:
        if j.get("devices") and j.get("start"):
            t = datetime.fromisoformat(j["start"].replace("Z", "+00:00")).timestamp()
            held.append((run, j["job"], j.get("shard"), set(j["devices"]), t, t + j["duration_s"]))
clash = [(x, y) for i, x in enumerate(held) for y in held[i + 1:] if x[3] & y[3] and x[4] < y[5] and y[4] < x[5]]
for x, y in clash:
    print("both held", sorted(x[3] & y[3]), x[:3], y[:3], file=sys.stderr)
sys.exit(1 if clash or len(held) != 10 else 0)' "$out/two-a/summary.json" "$out/two-b/summary.json" &&
	grep -hq "waiting for GPUs" "$out/two-a.log" "$out/two-b.log"
hostscheck $? "two ci runs on none:h200:0-3: 10 shards, no device held by both at once, one waited for the other ($((SECONDS - t0)) s)" "$out/two-a.log" "$out/two-b.log"

echo "=== RUN two fleet hosts that split one machine run at once (issue 38: they serialised on one host.lock)"
cat >"$out/split.yml" <<EOF
- {name: split-a, gpus: "none:h200:0-1"}
- {name: split-b, gpus: "none:h200:2-3"}
EOF
t0=$SECONDS
hostsrun split --hosts "$out/split.yml" --only stage-c-2-gpu-h200 --results "$out/split"
rc=$?
((rc == 0)) && python3 -c 'import json, sys
from datetime import datetime
held = []
for j in json.load(open(sys.argv[1]))["jobs"]:
    if j.get("stage") == "stage-c-2-gpu-h200" and j.get("start"):
        t = datetime.fromisoformat(j["start"].replace("Z", "+00:00")).timestamp()
        held.append((j.get("host"), t, t + j["duration_s"]))
hosts = sorted(h[0] for h in held)
at_once = len(held) == 2 and held[0][1] < held[1][2] and held[1][1] < held[0][2]
if hosts != ["split-a", "split-b"] or not at_once:
    print("wanted one shard on each host, at once, got", held, file=sys.stderr)
    sys.exit(1)' "$out/split/summary.json" && ! grep -q "waiting for GPUs" "$out/split.log"
hostscheck $? "two fleet hosts of one machine (none:h200:0-1, none:h200:2-3): a whole-host shard on each, at once, neither waited ($((SECONDS - t0)) s)" "$out/split.log" "$out/split.out"

echo "=== RUN two runs on --visible-devices 0,1 and 00,01 never hold a device at once (issue 38 item 7)"
for f in "$fxg"/tests/e2e/gpu/test_c2h200_*.py; do
	printf '    print("window:", time.time() - 3, time.time())\n' >>"$f"
done
visrun() { # visrun NAME IDS: miles-ci run of stage-c-2-gpu-h200's first shard on stand-in devices IDS
	bash "$engine" run "$out/miles-ci" run --repo "$fxg" --stage stage-c-2-gpu-h200 --shard 1 --labels run-ci-megatron --gpus none \
		--visible-devices "$2" --lock-dir "$locks" --quiet --results "$out/$1" >"$out/$1.out" 2>"$out/$1.log"
}
t0=$SECONDS
visrun vis-a 0,1 &
pa=$!
visrun vis-b 00,01 &
pb=$!
wait "$pa"
ra=$?
wait "$pb"
rb=$?
((ra == 0 && rb == 0)) && python3 -c 'import re, sys
w = []
for p in sys.argv[1:]:
    text = open(p).read()
    m = re.findall(r"window: ([0-9.]+) ([0-9.]+)", text)
    if len(m) != 1 or "visible: 0,1" not in text:
        print(p, "wanted one window on CUDA_VISIBLE_DEVICES=0,1, got", m, file=sys.stderr)
        sys.exit(1)
    w.append((float(m[0][0]), float(m[0][1])))
if w[0][0] < w[1][1] and w[1][0] < w[0][1]:
    print("both held devices 0,1 at once:", w, file=sys.stderr)
    sys.exit(1)' "$out/vis-a/run.log" "$out/vis-b/run.log" && grep -hq "waiting for GPUs 0,1" "$out/vis-a.log" "$out/vis-b.log"
hostscheck $? "run --visible-devices 0,1 and 00,01: one device each, written 0,1 in the container, one after the other ($((SECONDS - t0)) s)" "$out/vis-a.log" "$out/vis-b.log"

echo "=== RUN a killed run frees its devices at once"
printf 'import time\n\nfrom tests.ci.ci_register import register_cuda_ci\n\nregister_cuda_ci(est_time=5, suite="stage-c-4-gpu-h200", labels=["megatron"])\n\nif __name__ == "__main__":\n    time.sleep(120)\n' \
	>"$fxg/tests/e2e/gpu/test_c4h200_0.py"
hostsrun kill-a --gpus none:h200:0-3 --only stage-c-4-gpu-h200 --results "$out/kill-a" &
pa=$!
for _ in $(seq 240); do grep -q "stage-c-4-gpu-h200.* running" "$out/kill-a.log" && break; sleep 1; done
hostsrun kill-b --gpus none:h200:0-3 --only stage-c-2-gpu-h200 --results "$out/kill-b" &
pb=$!
for _ in $(seq 120); do grep -q "waiting for GPUs" "$out/kill-b.log" && break; sleep 1; done
waited=$(grep -c "waiting for GPUs" "$out/kill-b.log")
t0=$SECONDS
pkill -KILL -f "miles-ci ci --repo $fxg .*--results $out/kill-a"
for _ in $(seq 60); do grep -q "stage-c-2-gpu-h200.* running" "$out/kill-b.log" && break; sleep 1; done
freed=$((SECONDS - t0))
wait "$pb"
rb=$?
wait "$pa" 2>/dev/null
((waited > 0 && freed <= 10 && rb == 0))
hostscheck $? "a killed run's devices go to the waiting run in ${freed} s (it waited: $waited line(s); exit $rb)" "$out/kill-a.log" "$out/kill-b.log"

# Hosts that fail, on a fresh tree (the checks above changed its tests).
# shellcheck source=hack/e2e/ci-fixture.sh
source hack/e2e/ci-fixture.sh
# sessions: the dagger sessions of this engine's CLI still running (none once a run ended).
sessions() { pgrep -af "^$_EXPERIMENTAL_DAGGER_CLI_BIN session" || true; }
ms() { echo $((($(date +%s%N) - $1) / 1000000)); } # ms T0: milliseconds since T0 (date +%s%N)
echo "=== RUN no dagger session outlives the runs above"
left=$(sessions)
[[ -z $left ]]
hostscheck $? "no dagger session left by the runs above (the fleet with a host that fails fast and one refused, the killed run): ${left:-none}" "$out/fleet.log"

echo "=== RUN a host whose engine refuses the connection is down in seconds"
printf -- '- {name: h100-c, gpus: "none:h100:0-7", engine: "tcp://127.0.0.1:9"}\n' >"$out/hosts-refused.yml"
t0=$(date +%s%N)
hostsrun refused --hosts "$out/hosts-refused.yml" --results "$out/refused" --only stage-c-8-gpu-h100
rc=$? refused_ms=$(ms "$t0")
((rc == 125 && refused_ms < 15000)) &&
	grep -q "down: host h100-c: connecting to a Dagger engine: tcp://127.0.0.1:9 takes no connection: connect: connection refused" "$out/refused.out" &&
	[[ -z $(sessions) ]]
hostscheck $? "a refused engine: the host down and its shards not run, the whole run in ${refused_ms} ms (exit $rc; it took 2 minutes)" "$out/refused.log" "$out/refused.out"

echo "=== RUN a host whose engine dies mid-run is down at once; its shard runs on the other host"
for f in "$fxg"/tests/e2e/gpu/test_c4h200_*.py; do
	printf '    import time\n    time.sleep(8)\n' >>"$f"
done
python3 hack/e2e/sockproxy.py "$out/proxy.sock" "${_EXPERIMENTAL_DAGGER_RUNNER_HOST#unix://}" &
proxy=$!
for _ in $(seq 50); do [[ -S $out/proxy.sock ]] && break; sleep 0.1; done
printf -- '- {name: h200-p, gpus: "none:h200:0-3", engine: "unix://%s"}\n- {name: h200-a, gpus: "none:h200:0-3"}\n' "$out/proxy.sock" >"$out/hosts-dies.yml"
hostsrun dies --hosts "$out/hosts-dies.yml" --results "$out/dies" --only stage-c-4-gpu-h200 &
pd=$!
for _ in $(seq 240); do grep -q "stage-c-4-gpu-h200 .* running on h200-p" "$out/dies.log" && break; sleep 1; done
sleep 4
title=$(grep -o "pr-test/stage-c-4-gpu-h200 shard [0-9]/3 *running on h200-p" "$out/dies.log" | head -n 1 | sed 's/ *running.*//')
seen=$(wc -l <"$out/dies.log")
t0=$(date +%s%N)
kill -KILL "$proxy"
moved_ms=
for _ in $(seq 300); do
	if tail -n +"$((seen + 1))" "$out/dies.log" | grep -q "$title .*running on h200-a"; then
		moved_ms=$(ms "$t0")
		break
	fi
	sleep 0.1
done
# It ends once its results are printed (it hung 5 minutes there, closing the dead host's session).
exit_ms=
for _ in $(seq 3000); do grep -q '^results: ' "$out/dies.out" && break; sleep 0.1; done
t1=$(date +%s%N)
for _ in $(seq 300); do
	if ! kill -0 "$pd" 2>/dev/null; then
		exit_ms=$(ms "$t1")
		break
	fi
	sleep 0.1
done
wait "$pd"
rc=$?
((rc == 0 && ${exit_ms:-30000} < 10000)) && [[ -n $title && -n $moved_ms && -z $(sessions) ]] && python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
jobs = [j for j in s["jobs"] if j.get("stage") == "stage-c-4-gpu-h200"]
sys.exit(0 if len(jobs) == 3 and all(j["state"] == "passed" and j.get("host") == "h200-a" for j in jobs) else 1)' "$out/dies/summary.json"
hostscheck $? "an engine that dies under a shard: h200-p down, ${title:-its shard} running on h200-a ${moved_ms:-never} ms after the kill, all 3 shards passed there, the process ended ${exit_ms:-not within 30 s} ms after its results (exit $rc)" "$out/dies.log" "$out/dies.out"

echo "=== RUN Ctrl-C ends a fleet run within 2 s, keeping what it knows"
printf '    import time\n    time.sleep(600)\n' >>"$fxg/tests/e2e/gpu/test_c4h200_0.py"
printf -- '- {name: h200-a, gpus: "none:h200:0-7"}\n' >"$out/hosts-int.yml"
hostsrun int --hosts "$out/hosts-int.yml" --results "$out/int" --only stage-c-4-gpu-h200 &
pi=$!
for _ in $(seq 240); do grep -q "stage-c-4-gpu-h200 .* passed" "$out/int.log" && break; sleep 1; done
sleep 3
mpid=$(pgrep -f "miles-ci ci --repo $fxg .*--results $out/int( |$)") # miles-ci's own, not the subshell's
t0=$(date +%s%N)
kill -INT "$mpid"
wait "$pi"
rc=$? int_ms=$(ms "$t0")
left=$(sessions)
((rc == 130 && int_ms <= 2000)) && [[ -z $left ]] && python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
st = sorted(j["state"] for j in s["jobs"] if j.get("stage") == "stage-c-4-gpu-h200")
sys.exit(0 if s["cancelled"] and "passed" in st and "cancelled" in st else 1)' "$out/int/summary.json"
hostscheck $? "Ctrl-C: the fleet run ended ${int_ms} ms after SIGINT (exit $rc), its summary cancelled with the passed shards kept; dagger sessions left: ${left:-none}" "$out/int.log" "$out/int.out"
set -e
