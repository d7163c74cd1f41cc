set -euo pipefail
if ! command -v uv >/dev/null 2>&1; then python -m pip install uv; fi
if ! command -v helm >/dev/null 2>&1; then
	arch=$(uname -m)
	case $arch in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; esac
	# The sha256 of each release archive miles-ci installs, from the release's
	# notes (https://github.com/helm/helm/releases); stagerun.HelmVersion's must be here.
	case $1-$arch in
	v4.2.3-amd64) sum=e9b88b4ee95b18c706839c28d3a0220e5bc470e9cd9262410c90793c45ff8b7c ;;
	v4.2.3-arm64) sum=21abd9354d39b2cd79a8d76be6912cd137a983cbf997193503fb8a6a6e2f2785 ;;
	*)
		echo "cpu-tools: no checksum for helm $1 on linux-$arch; add its sha256 to stagerun/scripts/cpu-tools.sh" >&2
		exit 1
		;;
	esac
	tmp=$(mktemp -d)
	curl -fsSL -o "$tmp/helm.tar.gz" "https://get.helm.sh/helm-$1-linux-$arch.tar.gz"
	if ! echo "$sum  $tmp/helm.tar.gz" | sha256sum -c --status -; then
		echo "cpu-tools: helm-$1-linux-$arch.tar.gz does not have the sha256 $sum; refusing to install it" >&2
		exit 1
	fi
	tar -xzf "$tmp/helm.tar.gz" -C "$tmp"
	install "$tmp/linux-$arch/helm" /usr/local/bin/helm
	rm -rf "$tmp"
fi
uv --version
helm version
