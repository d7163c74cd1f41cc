#!/usr/bin/env bash
# Runs as pid 1 of the engine's own mount/net/pid namespaces (started by engine.sh
# start through unshare, with its slot's run and state folders). Everything it
# changes is inside those namespaces: overlays on /etc, /usr/bin, /usr/local/bin and
# /usr/local/share, private /run and /tmp, and a network namespace whose only
# interface is loopback plus the engine's own bridge. It starts the loopback registry
# with the stand-in images, then runs the engine under tini.
set -euo pipefail

cache=${MILES_CI_CACHE:?}
bin=$cache/bin
run=${1:?usage: engine-ns.sh RUN-DIR STATE-DIR}
state=${2:?usage: engine-ns.sh RUN-DIR STATE-DIR}
ns=$run/ns

ip link set lo up

overlay() { # overlay DIR NAME: writable copy-on-write view of DIR kept in $ns/NAME
	mkdir -p "$ns/$2/upper" "$ns/$2/work"
	mount -t overlay overlay -o "lowerdir=$1,upperdir=$ns/$2/upper,workdir=$ns/$2/work" "$1"
}
overlay /etc etc
overlay /usr/bin usr-bin
overlay /usr/local/bin usr-local-bin
overlay /usr/local/share usr-local-share
mount -t tmpfs tmpfs /run
mkdir -p /run/dagger "$ns/tmp"
mount --bind "$run/dagger" /run/dagger
mount --bind "$ns/tmp" /tmp

# The engine expects its image's layout: helpers in /usr/local/bin, iptables backends
# in /usr/bin, built-in SDK content in /usr/local/share/dagger/content.
ln -sf "$(command -v runc)" /usr/local/bin/runc
cp "$bin/dagger-init" /usr/local/bin/dagger-init
cp /usr/bin/tini-static /usr/local/bin/tini
ln -sf /usr/sbin/xtables-legacy-multi /usr/bin/xtables-legacy-multi
ln -sf /usr/sbin/xtables-nft-multi /usr/bin/xtables-nft-multi
mkdir -p /usr/local/share/dagger/content
mount --bind "$cache/gosdk/oci" /usr/local/share/dagger/content
# The engine installs every CA in /usr/local/share/ca-certificates into every container,
# running update-ca-certificates around each command (seconds each). Containers here reach
# nothing outside the machine, so a host's own CAs (a proxy's, say) are of no use to them.
rm -rf /usr/local/share/ca-certificates
mkdir -p /usr/local/share/ca-certificates
rm -f /etc/resolv.conf
echo "nameserver 127.0.0.1" >/etc/resolv.conf
mkdir -p /etc/dagger
cat >/etc/dagger/engine.json <<'JSON'
{"registries":{"docker.io":{"mirrors":["127.0.0.1:5000"]},"127.0.0.1:5000":{"http":true}}}
JSON

# CNI plugins: Debian's plus Dagger's dnsname.
mkdir -p "$ns/cni"
ln -sf /usr/lib/cni/* "$ns/cni/"
ln -sf "$bin/dnsname" "$ns/cni/dnsname"

"$bin/miles-ci-registry" -layout "$cache/images/oci" -addr 127.0.0.1:5000 -ready "$run/registry-ready" \
	-image radixark/miles:dev=miles-dev \
	-image radixark/miles:release-v0.1.0-ci=miles-dev \
	-image rocm/sgl-dev:miles-rocm720-mi35x=rocm \
	-image python:3.11=python-3.11 &
for _ in $(seq 1 120); do
	[[ -f $run/registry-ready ]] && break
	sleep 0.5
done
[[ -f $run/registry-ready ]] || { echo "engine-ns: registry did not start" >&2; exit 1; }

export PATH=/usr/local/bin:/usr/bin:/usr/sbin:/bin:/sbin
# tini is pid 1: a namespace's init gets only the signals it handles, and tini
# forwards `engine.sh stop`'s TERM to the engine and reaps orphans.
exec /usr/bin/tini-static -- "$bin/engine" --root "$state" --oci-cni-binary-dir "$ns/cni" \
	--addr unix:///run/dagger/engine.sock
