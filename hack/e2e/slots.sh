#!/usr/bin/env bash
# Engine slots (sourced by hack/e2e.sh; uses its ok/bad): an engine this shell cannot
# see (another pid namespace sharing ~/.cache) holds engine-state's lock, so a second
# engine there would exit at once; `engine.sh start` must take slot 1 and answer there,
# and `stop` must end that engine. Runs on a scratch cache that borrows the built
# binaries and images, so the engine the other tests use is left alone. MILES_CI_ENGINE=local:
# the PATH e2e.sh sets holds the real cache's dagger, which is not the scratch cache's.

echo "=== RUN engine slots"
slots_check() {
	local c d holder rc=0
	# Not under /tmp: the engine's namespace mounts its own /tmp over it.
	c=$(mktemp -d /var/tmp/miles-ci-slots.XXXXXX)
	local cache=${MILES_CI_CACHE:-$HOME/.cache/miles-ci}
	for d in bin gosdk images src; do ln -s "$cache/$d" "$c/$d"; done
	mkdir -p "$c/engine-state"
	unshare --pid --fork --kill-child --mount-proc flock "$c/engine-state/dagger-engine.lock" sleep 600 &
	holder=$!
	for _ in $(seq 1 50); do
		flock -n "$c/engine-state/dagger-engine.lock" true || break
		sleep 0.1
	done
	if ! MILES_CI_ENGINE=local MILES_CI_CACHE=$c bash "$engine" start >"$out/slots.log" 2>&1; then
		tail -n 20 "$out/slots.log"
		rc=1
	elif ! grep -q "using $c/engine-state.1" "$out/slots.log"; then
		echo "start did not say it took slot 1:" && cat "$out/slots.log"
		rc=1
	elif ! MILES_CI_ENGINE=local MILES_CI_CACHE=$c bash "$engine" status >"$out/slots.status" 2>&1 ||
		! grep -q "socket $c/run.1/dagger/engine.sock" "$out/slots.status"; then
		cat "$out/slots.status"
		rc=1
	fi
	MILES_CI_ENGINE=local MILES_CI_CACHE=$c bash "$engine" stop >>"$out/slots.log" 2>&1 || rc=1
	if MILES_CI_ENGINE=local MILES_CI_CACHE=$c bash "$engine" status >/dev/null 2>&1; then
		echo "the slot-1 engine still runs after stop"
		rc=1
	fi
	# unshare blocks TERM while it waits; KILL ends it, and --kill-child ends flock.
	kill -KILL "$holder" 2>/dev/null || true
	wait "$holder" 2>/dev/null || true
	rm -rf "$c"
	return "$rc"
}
if ! bash "$engine" env | grep -q _EXPERIMENTAL_DAGGER_RUNNER_HOST; then
	echo "engine slots: skipped (an installed dagger CLI's engine is in use, not hack/engine's)"
elif slots_check; then
	ok "engine slots: start takes slot 1 while another engine holds engine-state"
else
	bad "engine slots"
fi
