#!/usr/bin/env bash
# A throwaway PostgreSQL server for the runtime-history tests (issue 25):
#   bash hack/postgres.sh start DIR   initdb in DIR (an empty folder), start the server on a
#                                     unix socket in DIR only (no TCP port), create the
#                                     database miles and print its postgres:// URL
#   bash hack/postgres.sh stop DIR    stop it (DIR is then left for the caller to remove)
# Debian's postgresql package is installed with apt-get when no initdb is found (root only;
# its own cluster is never started). As root the server runs as the package's postgres user,
# since PostgreSQL refuses to run as root. Takes 2-3 s.
set -euo pipefail
cmd=${1:?usage: postgres.sh start|stop DIR}
dir=${2:?usage: postgres.sh start|stop DIR}

bindir() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		if [ -x "$d/initdb" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

case $cmd in
start)
	if ! bin=$(bindir); then
		if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
			echo "postgres.sh: no initdb under /usr/lib/postgresql, and apt-get cannot install it (not root)" >&2
			exit 1
		fi
		# policy-rc.d keeps the package from starting its own cluster.
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; } >/dev/null 2>&1 || true
		rm -f /usr/sbin/policy-rc.d
		bin=$(bindir) || { echo "postgres.sh: apt-get could not install postgresql" >&2; exit 1; }
	fi
	mkdir -p "$dir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir"
	fi
	as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
	as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o "-c listen_addresses= -k $dir -c fsync=off" start >/dev/null ||
		{ cat "$dir/server.log" >&2; exit 1; }
	as_owner "$bin/createdb" -h "$dir" -U postgres miles
	echo "postgres://postgres@/miles?host=$dir"
	;;
stop)
	bin=$(bindir)
	as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
	;;
*)
	echo "usage: postgres.sh start|stop DIR" >&2
	exit 2
	;;
esac
