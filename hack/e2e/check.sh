#!/usr/bin/env bash
# `dagger check` on a Miles checkout (sourced by hack/e2e.sh; uses its ok/bad, dagger and
# $out): a copy of testdata/miles with miles-ci installed as a toolchain (a local copy of
# the module inside the checkout, as a local toolchain must be) lists miles-ci's checks,
# `lint` passes and prints its report (also on a second call, which an engine holding
# the first call's result must not answer silently from its cache), and a label no test
# uses fails `dagger check miles-ci:lint` with lint's message. The toolchain's --source is
# the checkout, not miles-ci's own folder.
# shellcheck disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

echo "=== RUN dagger check (miles-ci as a Miles checkout's toolchain)"
check_toolchain() {
	local ck=$out/check-checkout
	rm -rf "$ck" && mkdir -p "$ck/.dagger-tools/miles-ci" && cp -r testdata/miles/. "$ck/" || return 1
	git ls-files -co --exclude-standard -z | grep -zv '^testdata/' | xargs -0 cp --parents -t "$ck/.dagger-tools/miles-ci" || return 1
	(
		cd "$ck" || exit 1
		# shellcheck disable=SC2015 # the { } block is the failure of any step before it
		dagger init >"$out/check-init.log" 2>&1 &&
			dagger toolchain install ./.dagger-tools/miles-ci >"$out/check-install.log" 2>&1 &&
			dagger check -l >"$out/check-list.log" 2>&1 &&
			grep -q "miles-ci:lint" "$out/check-list.log" && grep -q "miles-ci:verify" "$out/check-list.log" || {
			tail -n 20 "$out"/check-*.log
			exit 1
		}
		# Twice: the second call is a new session on an engine that has the first one's
		# result (as CI's engine has the last run's), and must still print the report.
		for run in 1 2; do
			# shellcheck disable=SC2015 # the { } block is the failure of either step
			dagger check miles-ci:lint >"$out/check-lint.$run.log" 2>&1 &&
				grep -q "no drift: 11 suites, 11 stages, 19 labels, 61 registrations agree" "$out/check-lint.$run.log" || {
				echo "dagger check miles-ci:lint, run $run:"
				tail -n 20 "$out/check-lint.$run.log"
				exit 1
			}
		done
		sed -i '/^KNOWN_LABELS/a\    "nobody-uses-me": "a label no test uses",' tests/ci/labels.py
		if dagger check miles-ci:lint >"$out/check-drift.log" 2>&1; then
			echo "dagger check passed on a checkout with drift"
			exit 1
		fi
		grep -q "tests/ci/labels.py:8: unused-label: label nobody-uses-me is in KNOWN_LABELS but no test uses it" "$out/check-drift.log" || {
			tail -n 20 "$out/check-drift.log"
			exit 1
		}
	)
}
if check_toolchain; then
	ok "dagger check: miles-ci's lint and verify are the checkout's checks; lint fails on drift, naming the file and line"
else
	bad "dagger check"
fi
