# `miles-ci ci` checks of hack/e2e.sh (sourced by it: uses dagger, ok, bad, $out, $engine,
# $fixture), on a tree with testdata/miles's workflows and runner and one small passing
# test per stage shard (built here, below):
#   - the whole PR graph passes on stand-ins (--gpus none), shards of a stage reuse their
#     dependency layers, the results folder holds each shard's results and the run's
#     summary.json and junit.xml; independent shards overlap (the ratio is printed;
#     BenchmarkConcurrentShards measures it without an engine);
#   - the README's whole-CI command, as written, on the bundled tree (testdata/miles): every
#     job passes, GPU stages on stand-ins included, exit 0; and its failing example
#     (run-ci-sglang): the file that failed, the files that never started, report.html;
#   - the module's `ci ... plan` prints the CLI's --dry-run --json bytes, and its
#     `ci ... run` passes the same graph;
#   - a failing stage-a-cpu shard stops the GPU stages, and bypass-fastfail lets them run,
#     as pr-test.yml's `if:` says;
#   - that run's report.html, loaded in Debian's headless Chromium (hack/chromium.sh) with
#     every host name unresolvable, shows the failed shard's tail as text (its markup is
#     escaped), links its run.log, draws the timeline with the span against the lower
#     bound, and names nothing outside the page;
#   - a PR that changes docker/Dockerfile builds its image and runs its CUDA shards on it;
#   - SIGINT stops the run: exit 130, summary.json says cancelled, the finished shards keep
#     their results.
#   - on four stand-in device ids (--gpus none:0-3: scheduled as on a 4-GPU host, the
#     engine hands out no device), two 2-GPU shards get disjoint CUDA_VISIBLE_DEVICES and
#     the 8-GPU shards are not run, exit 125;
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

set +e
fxg=$out/fx-ci
# shellcheck source=hack/e2e/ci-fixture.sh
source hack/e2e/ci-fixture.sh

# ci ARGS...: miles-ci ci on the tree, stdout in $out/ci.out, stderr in $out/ci.log, exit in rc.
ci() {
	bash "$engine" run "$out/miles-ci" ci --repo "$fxg" --event pull_request --gpus "${cigpus:-none}" --quiet "$@" >"$out/ci.out" 2>"$out/ci.log"
	rc=$?
}
# cistate JOB: the state of JOB (a title as the text report prints it) in $out/ci.out.
cistate() { awk -v j="$1" 'index($0, j" ") == 1 { split(substr($0, length(j) + 1), f, " "); print f[1]; exit }' "$out/ci.out"; }
cicheck() { # cicheck RC NAME
	if (($1 == 0)); then ok "$2"; else tail -n 30 "$out/ci.log" "$out/ci.out"; bad "$2"; fi
}

echo "=== RUN miles-ci ci: the whole PR graph on stand-ins"
t0=$SECONDS
ci --pr-labels-json '["run-ci-megatron"]' --changed-files "$out/ci-changed" --results "$out/ci"
wall=$((SECONDS - t0))
((rc == 0)) && python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
shards = [j for j in s["jobs"] if j["kind"] == "stage" and j["state"] != "skipped"]
ok = not s["cancelled"] and len(shards) >= 15 and all(j["state"] == "passed" for j in shards)
busy = sum(j["duration_s"] for j in shards)
print(f"{len(shards)} shards, {busy:.0f} s of shard time in {sys.argv[2]} s wall: {busy / max(1, int(sys.argv[2])):.1f}x", file=sys.stderr)
sys.exit(0 if ok else 1)' "$out/ci/summary.json" "$wall" 2>>"$out/ci.ratio" && test -s "$out/ci/junit.xml" -a -s "$out/ci/stage-a-cpu/4-of-4/summary.json" -a -s "$out/ci/stage-c-4-gpu-mi350/2-of-2/run.log" &&
	test -f "$out/ci/.miles-ci-results" && grep -q "dependency layers:" "$out/ci.out"
cicheck $? "miles-ci ci: every shard of the PR graph passed on stand-ins ($(tail -n 1 "$out/ci.ratio" 2>/dev/null); $(grep -o '[0-9]* reused' "$out/ci.out"))"

# readme CMD-ARGS...: runs the README's `bash hack/ci.sh CMD-ARGS` as written (the README must
# show that exact line), from a scratch folder so its miles-ci-results/ lands there; stdout in
# $out/readme-ci.out, the results folder it names in $readme_res, the README's output block
# after the command in $out/readme-ci.want, exit in rc.
readme() {
	python3 - README.md "$@" >"$out/readme-ci.want" <<'PY'
import shlex, sys
text, args = open(sys.argv[1]).read(), sys.argv[2:]
line = next((l for l in text.splitlines() if l.startswith("bash hack/ci.sh ") and shlex.split(l)[2:] == args), None)
if line is None:
    sys.exit("the README shows no line bash hack/ci.sh " + shlex.join(args))
print(text[text.index(line + "\n```"):].split("```", 3)[2].strip("\n"))
PY
	rc=$?
	((rc == 0)) || return
	rm -rf "$out/readme-ci" && mkdir -p "$out/readme-ci" &&
		(cd "$out/readme-ci" && bash "$repo/hack/ci.sh" "$@") >"$out/readme-ci.out" 2>"$out/ci.log"
	rc=$?
	readme_res=$out/readme-ci/$(sed -n 's/^results: //p' "$out/readme-ci.out")
}

echo "=== RUN docs: the README's whole-CI command on the bundled tree, as written"
readme --event pull_request --pr-labels-json '["run-ci-megatron"]' --gpus none
((rc == 0)) && grep -qxF "$(grep -E '^[0-9]+ jobs: ' "$out/readme-ci.want")" "$out/readme-ci.out" && python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
stages = [j for j in s["jobs"] if j["kind"] == "stage"]
ran = {j["backend"] for j in stages}
sys.exit(0 if len(stages) >= 17 and all(j["state"] == "passed" for j in stages) and {"cpu", "cuda", "rocm"} <= ran else 1)' "$readme_res/summary.json"
cicheck $? "docs: the README's whole-CI command runs every stage of the bundled tree, GPU ones on stand-ins, and exits 0 ($(grep -E '^[0-9]+ jobs: ' "$out/readme-ci.out"))"

echo "=== RUN docs: the README's failing example, as written"
readme --event pull_request --pr-labels-json '["run-ci-megatron","run-ci-sglang"]' --gpus none
((rc == 1)) && grep -qxF "$(grep -E '^[0-9]+ jobs: ' "$out/readme-ci.want")" "$out/readme-ci.out" &&
	grep -qxF "$(grep '^failed: ' "$out/readme-ci.want")" "$out/readme-ci.out" &&
	grep -qxF "$(grep ' never started: ' "$out/readme-ci.want")" "$out/readme-ci.out" &&
	grep -qF 'Never started, as the run stopped after tests/fast/router/test_router.py failed:' "$readme_res/report.html" &&
	test "$(grep -c 'class="tail"' "$readme_res/report.html")" = 1
cicheck $? "docs: the README's failing example names the failed file and the files that never started, in the table and report.html (exit $rc)"

echo "=== RUN miles-ci ci: the module's graph is the CLI's"
ci --pr-labels-json '["run-ci-megatron"]' --changed-files "$out/ci-changed" --dry-run --json
cp "$out/ci.out" "$out/ci-dry.json"
dagger call --source "$fxg" --gpus none ci --event pull_request --pr-labels run-ci-megatron --changed-files "$out/ci-changed" plan json \
	>"$out/ci-module.json" 2>"$out/ci.log" && cmp -s "$out/ci-dry.json" "$out/ci-module.json"
cicheck $? "module: ci ... plan prints miles-ci ci --dry-run --json, byte for byte"
dagger call --source "$fxg" --gpus none ci --event pull_request --pr-labels run-ci-megatron --changed-files "$out/ci-changed" --only cpu \
	run results export --path "$out/ci-module" >"$out/ci.out" 2>"$out/ci.log" &&
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
ran = [j for j in s["jobs"] if j["kind"] == "stage" and j["state"] == "passed"]
sys.exit(0 if len(ran) == 5 and not s["cancelled"] else 1)' "$out/ci-module/summary.json" && test -s "$out/ci-module/stage-b-cpu/summary.json"
test -s "$out/ci-module/report.html"
cicheck $? "module: ci ... run runs the CPU shards of the graph and exports their results (report.html too)"

echo "=== RUN miles-ci ci: a failing stage-a-cpu shard and bypass-fastfail"
printf '\n\ndef test_broken():\n    assert False, "e2e-tail-marker </pre><script>document.title = 1</script>"\n' >>"$fxg/tests/fast/test_a1.py"
# No --results: the run keeps its results in a new folder under ./miles-ci-results/ and names it.
mkdir -p "$out/ci-cwd" && pushd "$out/ci-cwd" >/dev/null &&
	ci --pr-labels-json '["run-ci-megatron"]' --changed-files "$out/ci-changed" --only stage-a-cpu stage-b-2-gpu-h200 && popd >/dev/null
failres=$(sed -n 's/^miles-ci: the results go to //p' "$out/ci.log" | head -n 1)
[[ $failres == miles-ci-results/pull_request-* ]] && failres=$out/ci-cwd/$failres
((rc == 1)) && [[ $(cistate "pr-test/stage-b-2-gpu-h200") == skipped ]] && grep -q "cross-stage fast-fail" "$out/ci.out" &&
	test -s "$failres/summary.json" -a -s "$failres/report.html" && grep -q "^results: " "$out/ci.out"
cicheck $? "miles-ci ci: a failing stage-a-cpu shard skips the GPU stage (exit 1); with no --results the run kept them in $failres"

echo "=== RUN miles-ci ci: report.html in a headless browser"
page=$failres/report.html
if chromium=$(bash hack/chromium.sh </dev/null); then
	# No network: every host name fails to resolve, and the page names none (no src, href or
	# url() with a scheme or //, no <link>, no script).
	timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$(mktemp -d -p "$out")" --host-resolver-rules="MAP * ~NOTFOUND" \
		--virtual-time-budget=5000 --dump-dom "file://$page" >"$out/ci-dom.html" 2>"$out/ci-chromium.log"
	crc=$?
	((crc == 0)) && grep -q 'id="miles-ci-report" data-verdict="failed"' "$out/ci-dom.html" &&
		grep -q 'e2e-tail-marker &lt;/pre&gt;&lt;script&gt;document.title = 1&lt;/script&gt;' "$out/ci-dom.html" &&
		! grep -q '<script' "$out/ci-dom.html" && grep -q '<svg id="timeline"' "$out/ci-dom.html" &&
		grep -q '<p id="timeline-figures">span [0-9.]* s, lower bound [0-9.]* s (' "$out/ci-dom.html" && log=$(grep -o 'its log: <a href="stage-a-cpu/[0-9]-of-4/run.log"' "$out/ci-dom.html" | cut -d'"' -f2) &&
		test -s "$failres/$log" && ! grep -qiE '(src|href)="?([a-z][a-z0-9+.-]*:|//)|url\(|<link|@import' "$page"
	r=$?
	((r == 0)) || { tail -n 5 "$out/ci-chromium.log"; grep -c . "$out/ci-dom.html"; }
	cicheck $r "report.html: Chromium loads it offline, the failed shard's tail is in the page as text, its run.log ($log) linked, the timeline drawn with the span against the lower bound (chromium exit $crc)"
else
	bad "report.html: hack/chromium.sh found or installed no chromium"
fi
ci --pr-labels-json '["run-ci-megatron","bypass-fastfail"]' --changed-files "$out/ci-changed" --only stage-a-cpu stage-b-2-gpu-h200
((rc == 1)) && [[ $(cistate "pr-test/stage-b-2-gpu-h200") == passed ]]
cicheck $? "miles-ci ci: with bypass-fastfail the GPU stage runs after the failing shard"

echo "=== RUN miles-ci ci: a PR that changes docker/Dockerfile runs its CUDA shards on its own image"
ci --pr-labels-json '["run-ci-megatron","bypass-fastfail"]' --changed-files "$out/ci-docker" --pr-number 7 --only stage-b-2-gpu-h200 --results "$out/ci-img"
((rc == 0)) && grep -q "built radixark/miles:pr-7" "$out/ci.out" && grep -q "pr image: True" "$out/ci-img/stage-b-2-gpu-h200/run.log"
cicheck $? "miles-ci ci: the PR image is built from the checkout's Dockerfile and the CUDA shard runs on it"

echo "=== RUN miles-ci ci: GPU shards on four stand-in devices (--gpus none:0-3)"
cigpus=none:0-3 ci --pr-labels-json '["run-ci-megatron","bypass-fastfail"]' --changed-files "$out/ci-changed" --only stage-c-2-gpu-h200 stage-c-8-gpu-h200 --results "$out/ci-gpus"
v0=$(grep -ho 'visible: .*' "$out/ci-gpus/stage-c-2-gpu-h200/1-of-2/run.log" | head -n 1)
v1=$(grep -ho 'visible: .*' "$out/ci-gpus/stage-c-2-gpu-h200/2-of-2/run.log" | head -n 1)
((rc == 125)) && [[ $(cistate "pr-test/stage-c-2-gpu-h200 shard 1/2") == passed && $(cistate "pr-test/stage-c-8-gpu-h200 shard 1/2") == not-run ]] &&
	grep -q "needs 8 GPUs; this host has 4 (--gpus none:0,1,2,3)" "$out/ci.out" &&
	[[ "$v0 $v1" == "visible: 0,1 visible: 2,3" || "$v0 $v1" == "visible: 2,3 visible: 0,1" ]]
cicheck $? "miles-ci ci: two 2-GPU shards get disjoint devices ($v0; $v1), the 8-GPU shards are not run on a 4-GPU host (exit $rc)"

echo "=== RUN miles-ci ci: SIGINT keeps the finished shards' results"
printf 'import time\n\nfrom tests.ci.ci_register import register_cuda_ci\n\nregister_cuda_ci(est_time=5, suite="stage-c-8-gpu-h200", labels=["megatron"])\n\nif __name__ == "__main__":\n    time.sleep(600)\n' \
	>"$fxg/tests/e2e/gpu/test_c8h200_0.py"
rm -rf "$out/ci-int"
bash "$engine" run "$out/miles-ci" ci --repo "$fxg" --event pull_request --gpus none --quiet --pr-labels-json '["run-ci-megatron","bypass-fastfail"]' \
	--changed-files "$out/ci-changed" --only stage-b-cpu stage-c-8-gpu-h200 --results "$out/ci-int" >"$out/ci.out" 2>"$out/ci.log" &
pid=$!
for _ in $(seq 300); do
	grep -q "stage-b-cpu .* passed" "$out/ci.log" && grep -q "stage-c-8-gpu-h200 shard 1/2 .* running" "$out/ci.log" && break
	sleep 1
done
sleep 5
kill -INT "$pid"
wait "$pid"
rc=$?
((rc == 130)) && python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s["cancelled"] else 1)' "$out/ci-int/summary.json" && test -s "$out/ci-int/stage-b-cpu/summary.json" && grep -q "cancelled" "$out/ci-int/step-summary.md"
cicheck $? "miles-ci ci: SIGINT exits 130, the summary says cancelled, the finished shard keeps its results (exit $rc)"
set -e
