set -euo pipefail
if ! command -v uv >/dev/null 2>&1; then python -m pip install uv; fi
if ! command -v helm >/dev/null 2>&1; then
	arch=$(uname -m)
	case $arch in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; esac
	tmp=$(mktemp -d)
	curl -fsSL "https://get.helm.sh/helm-$1-linux-$arch.tar.gz" | tar -xz -C "$tmp"
	install "$tmp/linux-$arch/helm" /usr/local/bin/helm
	rm -rf "$tmp"
fi
uv --version
helm version
