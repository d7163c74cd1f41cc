# --cache-registry checks of hack/e2e.sh (sourced by it: uses ok, bad, $out, $engine), on a
# tree with testdata/miles's workflows and runner and one small passing test per CPU stage:
#   - two `miles-ci run`s of one shard stand for two hosts sharing the project's stand-in
#     registry (127.0.0.1:5000 in the engine's namespace): the first builds the dependency
#     layers and publishes them under their content key, the second pulls them by the
#     digest the first pushed;
#   - `miles-ci ci --only cpu` then pulls every CPU shard's layers, and its layer line
#     counts the pulls and builds;
#   - the content-key tag re-pointed to another image (the layers with a planted file, pushed
#     by someone without MILES_CI_CACHE_KEY) is not used: the next run builds the layers, names
#     the tag, and its test finds no planted file.
# One engine stands for both hosts: its own cache would also have the layers, so what
# proves the sharing is the second run's chain, which starts FROM the pushed digest (its
# note names it) and has none of the dependency steps to run. A fresh repository per e2e
# run (the registry keeps pushes while the engine lives) starts with nothing published.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

set +e
fxl=$out/fx-layers
rm -rf "$fxl" && cp -r testdata/miles "$fxl" &&
	rm -rf "$fxl/tests/e2e" "$fxl/tests/fast" "$fxl/tests/fast-gpu" "$fxl/tests/test_top_level.py" &&
	find "$fxl/tests/ci" -name 'test_*.py' -delete &&
	mkdir -p "$fxl/tests/fast"
for s in a b; do
	printf 'import os\n\nfrom tests.ci.ci_register import register_cpu_ci\n\nregister_cpu_ci(est_time=5, suite="stage-%s-cpu")\n\n\ndef test_ok():\n    assert not os.path.exists("/planted"), "a planted image ran"\n' "$s" >"$fxl/tests/fast/test_$s.py"
done
registry=127.0.0.1:5000/miles-ci/layers-e2e-$$-$(date +%s)
# The trusted hosts' secret: the layers they publish carry its proof.
export MILES_CI_CACHE_KEY=e2e-layers-key-$$-0123456789abcdef0123456789

# layers_run N: miles-ci run of stage-a-cpu's shard 0 with the cache registry, results in $out/layers-N.
layers_run() {
	bash "$engine" run "$out/miles-ci" run --repo "$fxl" --stage stage-a-cpu --shard 1 --gpus none --quiet \
		--cache-registry "$registry" --results "$out/layers-$1" >"$out/layers-$1.out" 2>"$out/layers-$1.log"
}
# note N: the dependency-layers note of run N's summary.json.
note() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(next((n for n in s.get("notes", []) if n.startswith("dependency layers:")), "no note"))' "$out/layers-$1/summary.json" 2>/dev/null
}

echo "=== RUN --cache-registry: the second host pulls the first host's layers"
layers_run 1
rc1=$?
layers_run 2
rc2=$?
n1=$(note 1) n2=$(note 2)
digest=${n1##*@}
digest=${digest%% *}
if ((rc1 == 0 && rc2 == 0)) && [[ $n1 == "dependency layers: built and published $registry:"*"@sha256:"* && $n2 == "dependency layers: pulled $registry@$digest "* ]]; then
	ok "--cache-registry: host 1 built and published $digest; host 2 pulled it by that digest"
else
	tail -n 20 "$out/layers-1.log" "$out/layers-2.log"
	echo "run 1 (exit $rc1): $n1"
	echo "run 2 (exit $rc2): $n2"
	bad "--cache-registry: the second host pulls the first host's layers"
fi

echo "=== RUN --cache-registry: ci counts pulls and builds"
printf 'M\0tests/fast/test_a.py\0' >"$out/layers-changed"
bash "$engine" run "$out/miles-ci" ci --repo "$fxl" --event pull_request --gpus none --quiet --only cpu \
	--changed-files "$out/layers-changed" --cache-registry "$registry" --results "$out/layers-ci" >"$out/layers-ci.out" 2>"$out/layers-ci.log"
rc=$?
if ((rc == 0)) && grep -qE 'through the cache registry, [1-9][0-9]* pulled, 0 built' "$out/layers-ci.out"; then
	ok "--cache-registry: ci pulled every CPU shard's layers ($(grep -oE '[0-9]+ pulled, [0-9]+ built' "$out/layers-ci.out"))"
else
	tail -n 5 "$out/layers-ci.log" "$out/layers-ci.out"
	grep -h '"dependency layers:' "$out"/layers-ci/*/*/summary.json | sort | uniq -c
	bad "--cache-registry: ci counts pulls and builds (exit $rc)"
fi

echo "=== RUN --cache-registry: a re-pointed content-key tag is not used"
key=${n1#*"(key "}
key=${key%%,*}
# Someone who can push but holds no key re-points the tag to the layers plus a planted file.
bash "$engine" run dagger --progress=plain core container from --address "$registry@$digest" \
	with-new-file --path /planted --contents planted publish --address "$registry:$key" >"$out/layers-plant.out" 2>"$out/layers-plant.log"
rp=$?
layers_run 3
rc3=$?
n3=$(note 3)
if ((rp == 0 && rc3 == 0)) && [[ $n3 == "dependency layers: $registry:$key names sha256:"*"not used: built here instead" ]] &&
	! grep -q "$digest" <<<"$n3" && grep -q -- "--cache-registry: $registry:$key names an image that no proof binds to its content key" "$out/layers-3.log"; then
	ok "--cache-registry: the re-pointed $registry:$key was refused and named, the layers built again, no planted file in the test's container"
else
	tail -n 20 "$out/layers-plant.log" "$out/layers-3.log" "$out/layers-3.out"
	echo "plant (exit $rp); run 3 (exit $rc3): $n3"
	bad "--cache-registry: a re-pointed content-key tag is not used"
fi
unset MILES_CI_CACHE_KEY
set -e
