# The module's Go test module (sourced by hack/e2e.sh; uses its ok/bad, dagger, $out,
# $fixture and the stage fixture $fx of hack/e2e/stages.sh): hack/e2e/moduletest calls
# the module's functions through the typed client the engine generates for a dependency
# (plan, ci ... plan, a CPU stage run and lint, the check), and compares the answers
# with the CLI's. Its bindings are generated in a scratch copy of the tree (dagger
# develop); nothing generated is committed.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out and the rest

echo "=== RUN the module's Go test module (hack/e2e/moduletest)"
moduletest() {
	local src=$out/moduletest-src want=$out/moduletest-want
	rm -rf "$src" "$want" && mkdir -p "$src" "$want" || return 1
	"$out/miles-ci" plan --repo "$fixture" --hw cpu --suite stage-a-cpu --json >"$want/plan.json" &&
		"$out/miles-ci" ci --repo "$fixture" --event schedule --schedule "0 15 * * 6" --gpus none --dry-run --json \
			>"$want/ci-plan.json" || return 1
	git ls-files -co --exclude-standard -z | grep -zv '^testdata/' | xargs -0 cp --parents -t "$src" || return 1
	# A git repository makes the copy the modules' context, so the test module's
	# dependency on ../../.. (miles-ci) stays inside it.
	git -C "$src" init -q || return 1
	(cd "$src/hack/e2e/moduletest" && dagger develop) >"$out/moduletest-develop.log" 2>&1 || {
		tail -n 30 "$out/moduletest-develop.log"
		return 1
	}
	dagger call -m "$src/hack/e2e/moduletest" all --miles "$fixture" --stages "$fx" --want "$want" \
		>"$out/moduletest.log" 2>&1 || {
		tail -n 40 "$out/moduletest.log"
		return 1
	}
}
if moduletest; then
	ok "module Go test: plan, ci ... plan (typed fields and json), messages, a CPU stage run and lint through the typed client"
else
	bad "module Go test (hack/e2e/moduletest)"
fi
