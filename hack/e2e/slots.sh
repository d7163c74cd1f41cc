#!/usr/bin/env bash
# Engine slots (sourced by hack/e2e.sh; uses its ok/bad): an engine this shell cannot
# see (another pid namespace sharing ~/.cache) holds engine-state's lock, so a second
# engine there would exit at once; `engine.sh start` must take slot 1 and answer there,
# and `stop` must end that engine, all from a pid namespace whose /proc is not its own.
# Runs on a scratch cache that borrows the built binaries and images, so the engine the
# other tests use is left alone. MILES_CI_ENGINE=local:
# the PATH e2e.sh sets holds the real cache's dagger, which is not the scratch cache's.
# shellcheck disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

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
	# start, status and stop run in a pid namespace of their own under this machine's
	# /proc, as a CI job may: the pids engine.sh records are not the ones /proc lists.
	local step=0
	# shellcheck disable=SC2016 # the inner bash expands $1 and $2, not this shell
	MILES_CI_ENGINE=local MILES_CI_CACHE=$c unshare --pid --fork -- bash -c '
		engine=$1 out=$2
		bash "$engine" start >"$out/slots.log" 2>&1 || exit 1
		bash "$engine" status >"$out/slots.status" 2>&1 || exit 2
		bash "$engine" stop >>"$out/slots.log" 2>&1 || exit 3
		! bash "$engine" status >/dev/null 2>&1 || exit 4' bash "$engine" "$out" || step=$?
	case $step in
	0) ;;
	1) tail -n 20 "$out/slots.log" ;;
	2) echo "status after start:" && cat "$out/slots.status" ;;
	3) echo "stop failed:" && tail -n 20 "$out/slots.log" ;;
	4) echo "the slot-1 engine still runs after stop" ;;
	*) echo "the slots check's pid namespace ended with $step" ;;
	esac
	((step == 0)) || rc=1
	if ((rc == 0)) && ! grep -q "using $c/engine-state.1" "$out/slots.log"; then
		echo "start did not say it took slot 1:" && cat "$out/slots.log"
		rc=1
	elif ((rc == 0)) && ! grep -q "socket $c/run.1/dagger/engine.sock" "$out/slots.status"; then
		cat "$out/slots.status"
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
	ok "engine slots: start takes slot 1 while another engine holds engine-state, from a pid namespace under a foreign /proc"
else
	bad "engine slots"
fi
