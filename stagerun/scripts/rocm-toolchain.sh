set -euo pipefail
if command -v rustup >/dev/null 2>&1; then rustup default stable; fi
if ! command -v protoc >/dev/null 2>&1; then
	apt-get update
	apt-get install -y protobuf-compiler
fi
rustc --version
protoc --version
