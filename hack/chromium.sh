#!/usr/bin/env bash
# Debian's Chromium for the e2e's check of report.html in a real headless browser (issue 32):
#   bash hack/chromium.sh    print the path of the chromium binary, installing Debian's
#                            chromium package with apt-get when none is found (root only)
# Nothing else is downloaded: the package comes from the machine's Debian mirror, as
# hack/postgres.sh installs postgresql. The e2e runs it with --headless and no network.
set -euo pipefail

find_chromium() {
	local c
	for c in chromium chromium-browser; do
		if command -v "$c" >/dev/null; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

if ! find_chromium; then
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		echo "chromium.sh: no chromium on PATH, and apt-get cannot install it (not root); install Debian's chromium package" >&2
		exit 1
	fi
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >/dev/null 2>&1 || true
	find_chromium || { echo "chromium.sh: apt-get could not install chromium" >&2; exit 1; }
fi
