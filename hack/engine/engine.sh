#!/usr/bin/env bash
# Hermetic Dagger engine for miles-ci development and CI.
#
# usage: hack/engine/engine.sh build|start|stop|env|status|run CMD...|serve CMD...
#
#   build   install the Debian packages it needs and build (or reuse from the cache)
#           the Dagger v0.21.8 binaries, the stand-in images and the Go SDK image
#   start   build if needed, then start the engine in its own mount/net/pid namespaces,
#           listening on a unix socket only; a loopback registry inside the same
#           namespaces serves the stand-in images as docker.io names
#   stop    end exactly the processes `start` started (by pid) and clean up
#   env     print `export ...` lines that point a dagger client at the engine
#   status  say which engine is in use and whether it answers
#   run     run CMD with that environment, in a network namespace with only loopback
#   serve   run CMD (a test server) in the engine's own network namespace, where the
#           engine's containers reach it at the bridge gateway (`serve ip -4 addr` shows it)
#
# When a `dagger` CLI is installed (users' machines, GitHub runners) it is used with its
# normal engine and build/start/stop do nothing; MILES_CI_ENGINE=local forces the local
# engine. Everything built or kept lives under $MILES_CI_CACHE (~/.cache/miles-ci), never in
# the repository. Needs root, apt and ~10 GB of disk. See docs/engine.md.
set -euo pipefail
# No job control, even where the caller exports monitor mode in SHELLOPTS: a background
# job of a monitor-mode shell leads its own process group, and setsid then forks, so $!
# would be a setsid that has already exited rather than the engine's unshare.
set +m

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export MILES_CI_CACHE=${MILES_CI_CACHE:-$HOME/.cache/miles-ci}
cache=$MILES_CI_CACHE
bin=$cache/bin
max_slots=8

# An engine's run folder (pid, socket, namespace overlays) and state (its lock and build
# cache) form a slot; slot 0 is run/ and engine-state/. Another engine may hold slot 0's
# state lock where this shell cannot see its pid: one started in another pid namespace
# sharing ~/.cache (a sandbox and its CI job, say). A second engine on a locked state
# exits at once ("another instance running?"), so start takes the next free slot instead.
slot_dirs() { # slot_dirs N sets run, state and sock for slot N
	if (($1 == 0)); then
		run=$cache/run state=$cache/engine-state
	else
		run=$cache/run.$1 state=$cache/engine-state.$1
	fi
	sock=$run/dagger/engine.sock
}

log() { echo "engine: $*" >&2; }
die() { echo "engine: $*" >&2; exit 1; }

# mode prints "system" when an installed dagger CLI should be used, else "local".
mode() {
	if [[ ${MILES_CI_ENGINE:-} == local ]]; then
		echo local
	elif [[ ${MILES_CI_ENGINE:-} == system ]]; then
		echo system
	else
		local d
		d=$(command -v dagger 2>/dev/null || true)
		if [[ -n $d && $(readlink -f "$d") != "$bin"/* ]]; then echo system; else echo local; fi
	fi
}

apt_packages=(runc containernetworking-plugins dnsmasq-base iptables iproute2 tini umoci
	busybox-static debootstrap git ca-certificates python3 util-linux)

install_packages() {
	local missing=()
	for p in "${apt_packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	[[ $(id -u) == 0 ]] || die "needs root to install: ${missing[*]}"
	log "apt-get install ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

cmd_build() {
	[[ $(mode) == system ]] && { log "using the installed dagger CLI: nothing to build"; return 0; }
	[[ $(id -u) == 0 ]] || die "the local engine needs root (namespaces, mounts, runc)"
	command -v go >/dev/null || die "needs Go 1.26 on PATH"
	mkdir -p "$cache/logs"
	install_packages
	bash "$here/build-dagger.sh"
	bash "$repo/hack/images/build-images.sh"
	(cd "$repo/hack" && GOFLAGS=-mod=mod go build -trimpath -o "$bin/miles-ci-registry" ./registry)
	bash "$here/build-gosdk.sh"
}

running_pid() { # prints the pid of the running unshare, if any
	local pid
	[[ -f $run/engine.pid ]] || return 1
	pid=$(cat "$run/engine.pid")
	[[ -n $pid && -d /proc/$pid ]] || return 1
	grep -q unshare "/proc/$pid/cmdline" 2>/dev/null || return 1
	echo "$pid"
}

# state_locked: an engine (seen from here or not) holds this slot's state.
state_locked() {
	[[ -e $state/dagger-engine.lock ]] && ! flock -n "$state/dagger-engine.lock" true
}

# use_running_slot selects the slot whose engine this shell sees running; else slot 0.
use_running_slot() {
	local n
	for ((n = 0; n < max_slots; n++)); do
		slot_dirs "$n"
		running_pid >/dev/null && return 0
	done
	slot_dirs 0
	return 1
}

# use_free_slot selects the first slot no engine holds.
use_free_slot() {
	local n
	for ((n = 0; n < max_slots; n++)); do
		slot_dirs "$n"
		if ! state_locked; then
			((n == 0)) || log "$cache/engine-state is held by an engine not started from this pid namespace; using $state"
			return 0
		fi
	done
	die "every engine state under $cache (engine-state, engine-state.1 ... .$((max_slots - 1))) is held by a running engine; stop one, or set MILES_CI_CACHE to another folder"
}

# detached CMD... runs CMD away from any terminal: stdin from /dev/null, stdout and
# stderr to the caller's redirections, in a session of its own (setsid -w waits and
# passes on the exit status). A client that finds a terminal queries it, and in a
# background process group (timeout(1) puts its child in one) the kernel stops it
# (SIGTTIN/SIGTTOU): from tmux the health check hung, then called a healthy engine dead.
detached() { setsid -w "$@" </dev/null; }

# answers checks that the engine answers a client; on failure answers_why says why
# (the client's last lines, or the timeout).
answers_why=
answers() {
	local out status=0
	out=$(detached env _EXPERIMENTAL_DAGGER_RUNNER_HOST="unix://$sock" DO_NOT_TRACK=1 \
		timeout 20 "$bin/dagger" core version --progress=plain 2>&1) || status=$?
	case $status in
	0) answers_why= ;;
	124) answers_why="\`dagger core version\` got no answer within 20 s (the engine is busy or hung)" ;;
	*) answers_why="\`dagger core version\` exited $status: $(tail -n 3 <<<"$out" | tr '\n' ' ')" ;;
	esac
	return "$status"
}

# answers_retry checks up to three times, 5 s apart: a busy engine (a cold
# build on a loaded machine) may miss one check.
answers_retry() {
	local i
	for i in 1 2 3; do
		answers && return 0
		((i == 3)) || sleep 5
	done
	return 1
}

cmd_start() {
	[[ $(mode) == system ]] && { log "using the installed dagger CLI and its engine"; return 0; }
	# One start at a time per cache: two shells starting at once would build into
	# the same folders, then both find the slot free, and the second engine would
	# exit on the first one's state lock.
	mkdir -p "$cache"
	exec 9>"$cache/engine-start.lock"
	flock 9
	use_running_slot || true
	cmd_build
	local digest config
	digest=$(cat "$cache/gosdk/digest")
	# What the running engine was started with: the Go SDK image, the images the
	# registry serves and the namespace script (which names the images it serves).
	config="$digest $(cd "$cache/images" && ls .built-* 2>/dev/null) $(sha256sum <"$here/engine-ns.sh" | cut -c1-16)"
	# An engine that answers is never stopped or restarted here: others may be
	# using it. One started with other images, or one that does not answer, is
	# reported with what to run.
	if pid=$(running_pid); then
		answers_retry || die "the engine (pid $pid, socket $sock) is running but does not answer: $answers_why; log: $run/engine.log. Run \`bash hack/engine/engine.sh status\` to check again; if no one else uses it, \`bash hack/engine/engine.sh stop\` then \`bash hack/engine/engine.sh start\` restarts it"
		if [[ $(cat "$run/config" 2>/dev/null) != "$config" ]]; then
			log "already running (pid $pid) and answers, but was started with another Go SDK image, other stand-in images or another engine-ns.sh; it is left running. To use the new ones, when no one else uses it: \`bash hack/engine/engine.sh stop\` then \`bash hack/engine/engine.sh start\`"
		else
			log "already running (pid $pid)"
		fi
		return 0
	fi
	use_free_slot
	mkdir -p "$run" "$state"
	rm -rf "$run/ns" "$run/dagger" "$run/registry-ready"
	mkdir -p "$run/ns" "$run/dagger"
	echo "$config" >"$run/config"
	local t0=$SECONDS
	# setsid: the engine outlives this shell; --kill-child: it dies with unshare.
	setsid unshare --mount --net --pid --fork --kill-child --mount-proc --propagation private \
		env MILES_CI_CACHE="$cache" DAGGER_GO_SDK_MANIFEST_DIGEST="$digest" \
		bash "$here/engine-ns.sh" "$run" "$state" </dev/null >"$run/engine.log" 2>&1 9>&- &
	local launched=$! status
	echo "$launched" >"$run/engine.pid"
	for _ in $(seq 1 120); do
		if [[ -S $sock ]] && answers; then
			log "started in $((SECONDS - t0)) s (pid $launched); socket $sock"
			return 0
		fi
		# Our own child, so kill -0 is exact. running_pid's check of the command line
		# would be wrong here: until the child has exec'd setsid and unshare, its
		# command line is this script's, which once made a starting engine look
		# gone and the job then ended it.
		if ! kill -0 "$launched" 2>/dev/null; then
			status=0
			wait "$launched" || status=$?
			tail -n 30 "$run/engine.log" >&2
			die "engine exited (status $status); log: $run/engine.log"
		fi
		sleep 1
	done
	tail -n 30 "$run/engine.log" >&2
	die "engine did not answer within 120 s; log: $run/engine.log"
}

cmd_stop() {
	[[ $(mode) == system ]] && return 0
	local pid child
	if pid=$(running_pid); then
		# The namespace's pid 1 is unshare's only child: tini, which forwards TERM to the engine.
		child=$(awk '{print $1}' "/proc/$pid/task/$pid/children" 2>/dev/null)
		if [[ -n $child ]]; then kill -TERM "$child" 2>/dev/null || true; fi
		for _ in $(seq 1 60); do
			[[ -d /proc/$pid ]] || break
			sleep 0.5
		done
		if [[ -d /proc/$pid ]]; then
			log "engine did not stop on TERM; killing pid $pid"
			kill -KILL "$pid" 2>/dev/null || true
			sleep 1
		fi
		log "stopped (pid $pid)"
	else
		log "not running"
	fi
	rm -f "$run/engine.pid" "$run/config"
	# runc leaves empty cgroup folders behind; remove them deepest first.
	local d
	for d in /sys/fs/cgroup/buildkit /sys/fs/cgroup/*/buildkit; do
		if [[ -d $d ]]; then find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi
	done
	rm -rf "$run/ns" "$run/dagger"
}

cmd_env() {
	if [[ $(mode) == system ]]; then
		echo "# using the installed dagger CLI and its engine"
		echo "export DO_NOT_TRACK=1"
		return 0
	fi
	echo "export _EXPERIMENTAL_DAGGER_RUNNER_HOST=unix://$sock"
	echo "export _EXPERIMENTAL_DAGGER_CLI_BIN=$bin/dagger"
	echo "export DO_NOT_TRACK=1 DAGGER_NO_NAG=1"
	echo "export PATH=$bin:\$PATH"
}

cmd_status() {
	local m
	m=$(mode)
	echo "mode: $m"
	if [[ $m == system ]]; then
		detached dagger version
		return 0
	fi
	echo "cache: $cache ($(du -sh "$cache" 2>/dev/null | cut -f1))"
	if pid=$(running_pid); then
		echo "engine: running (pid $pid), socket $sock"
		if answers; then
			echo "answers: yes"
		else
			echo "answers: no ($answers_why)"
			echo "log: $run/engine.log; run this again to recheck; if no one else uses the engine, \`bash hack/engine/engine.sh stop\` then \`bash hack/engine/engine.sh start\` restarts it"
			return 1
		fi
	else
		echo "engine: not running; \`bash hack/engine/engine.sh start\` starts it (and builds it the first time)"
		return 1
	fi
}

# cmd_run runs a client with no route off the machine: a fresh network namespace
# with only loopback (the engine is reached through its unix socket).
cmd_run() {
	[[ ${1:-} == -- ]] && shift
	(($# > 0)) || die "usage: engine.sh run CMD..."
	if [[ $(mode) == system ]]; then
		DO_NOT_TRACK=1 exec "$@"
	fi
	eval "$(cmd_env)"
	exec unshare --net -- bash -c 'ip link set lo up && exec "$@"' bash "$@"
}

# cmd_serve runs CMD in the local engine's network namespace: its containers
# (and the module runtime) reach a server there at the bridge gateway, and
# nothing outside the machine does.
cmd_serve() {
	[[ ${1:-} == -- ]] && shift
	(($# > 0)) || die "usage: engine.sh serve CMD..."
	[[ $(mode) == local ]] || die "serve needs the local engine: an installed dagger CLI's engine has no namespace of ours"
	local pid child
	pid=$(running_pid) || die "the engine is not running; run engine.sh start"
	child=$(awk '{print $1}' "/proc/$pid/task/$pid/children")
	[[ -n $child ]] || die "the engine's namespace has no process (pid $pid)"
	exec nsenter --target "$child" --net -- "$@"
}

# proc_is_ours: /proc shows this shell's pid namespace. A CI job may run in a pid
# namespace of its own under its host's /proc; there the pids this script records ($!)
# are not the pids /proc lists, so the engine it just started would look gone
# ("engine exited") and stop and serve could not find its namespace. Such a shell runs
# the script again in a mount namespace of its own with its own /proc.
proc_is_ours() { [[ /proc/self -ef /proc/$BASHPID ]]; }
if [[ $(mode) == local ]] && ! proc_is_ours; then
	[[ -z ${MILES_CI_ENGINE_OWN_PROC:-} ]] || die "/proc still shows another pid namespace after mounting our own"
	[[ $(id -u) == 0 ]] || die "/proc shows another pid namespace than this shell's; the local engine needs root to mount its own"
	export MILES_CI_ENGINE_OWN_PROC=1
	exec unshare --mount --propagation private --mount-proc -- bash "$0" "$@"
fi

use_running_slot || true
case ${1:-} in
build | start | stop | env | status) "cmd_$1" ;;
run) shift; cmd_run "$@" ;;
serve) shift; cmd_serve "$@" ;;
*) die "usage: engine.sh build|start|stop|env|status|run CMD...|serve CMD..." ;;
esac
