#!/usr/bin/env bash
# Opt-in: run `miles-ci verify` over many real states of a Miles repository
# (commits of its history and pull-request merge states, refs/pull/N/merge),
# each against the state's own tests/ci code. Nothing of Miles is copied into
# this repository: each state is exported to a temporary folder and removed.
#
#   bash hack/verify-history.sh --git-dir /path/to/miles.git [--states FILE]
#       [--main N] [--pulls N] [--max-cases N] [--out DIR] [--python PATH]
#
# --git-dir   a Miles clone (bare or not) holding the history and, for pull
#             states, refs/pull/*/merge (git fetch origin '+refs/pull/*:refs/pull/*')
# --states    a file of revisions, one a line (default: the generated set below)
# --main N    with no --states: N commits of the first-parent history of main
#             since the test registry exists (tests/ci/ci_register.py), spread
#             evenly, plus every commit that changed tests/ci/*.py (default 40)
# --pulls N   with no --states: N refs/pull/*/merge states, spread evenly over
#             the PR numbers (default 40)
# --max-cases at most N cases per command and state (default 300)
# --out       where each state's report (STATE.txt, STATE.json) goes (default a temp folder)
#
# It prints one line per state (its plan, policy and file-plan agreement, or
# the message miles-ci gives for a checkout it does not cover) and a total; it
# exits 1 when any state has a difference that is not such a message.
set -euo pipefail

git_dir="" states="" main=40 pulls=40 max_cases=300 out="" python=""
while [ $# -gt 0 ]; do
	case "$1" in
	--git-dir) git_dir="$2"; shift 2 ;;
	--states) states="$2"; shift 2 ;;
	--main) main="$2"; shift 2 ;;
	--pulls) pulls="$2"; shift 2 ;;
	--max-cases) max_cases="$2"; shift 2 ;;
	--out) out="$2"; shift 2 ;;
	--python) python="$2"; shift 2 ;;
	-h|--help) sed -n '2,24p' "$0"; exit 0 ;;
	*) echo "verify-history: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ -n "$git_dir" ] || { echo "verify-history: --git-dir is required (a Miles clone)" >&2; exit 2; }
git_dir=$(cd "$git_dir" && pwd)
G=(git --git-dir="$git_dir")
if [ -d "$git_dir/.git" ]; then G=(git --git-dir="$git_dir/.git"); fi
"${G[@]}" rev-parse --verify -q 'main^{commit}' >/dev/null || { echo "verify-history: $git_dir has no branch main; is it a Miles clone?" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] || out="$work/reports"
mkdir -p "$out"
bin="$work/miles-ci"
(cd "$here" && GOTOOLCHAIN=${GOTOOLCHAIN:-local} go build -o "$bin" ./cmd/miles-ci)

list="$work/states"
if [ -n "$states" ]; then
	grep -v '^\s*\(#\|$\)' "$states" >"$list"
else
	first=$("${G[@]}" log --format=%H --reverse main -- tests/ci/ci_register.py | sed -n 1p)
	"${G[@]}" rev-list --first-parent --reverse "$first^..main" >"$work/mainline"
	total=$(wc -l <"$work/mainline")
	step=$(( total / main > 0 ? total / main : 1 ))
	{
		awk -v s="$step" 'NR % s == 1 || s == 1' "$work/mainline"
		"${G[@]}" log -n 200 --format=%H --first-parent main -- tests/ci/
		"${G[@]}" for-each-ref --format='%(refname)' 'refs/pull/*/merge' |
			sort -t/ -k3,3n | awk -v n="$pulls" '{ a[NR] = $0 } END { s = NR / n; if (s < 1) s = 1; for (i = 1; i <= NR; i += s) print a[int(i)] }'
	} | awk '!seen[$0]++' >"$list"
fi

pass=0 declined=0 differ=0 nocheckout=0 cases=0
while read -r rev; do
	sha=$("${G[@]}" rev-parse --verify -q "$rev^{commit}" 2>/dev/null) || { echo "$rev: no such revision"; continue; }
	name=$(echo "$rev" | sed 's#^refs/##; s#/#-#g')
	[ "$name" = "$sha" ] && name=${sha:0:12}
	tree="$work/tree"
	rm -rf "$tree" && mkdir -p "$tree"
	"${G[@]}" archive "$sha" | tar -x -C "$tree"
	if [ ! -f "$tree/tests/ci/run_suite.py" ]; then
		echo "$name: no tests/ci/run_suite.py (before the registry)"; nocheckout=$((nocheckout + 1)); continue
	fi
	args=(verify --repo "$tree" --max-cases "$max_cases" --git-diffs 0)
	[ -n "$python" ] && args+=(--python "$python")
	if "${G[@]}" rev-parse -q --verify "$sha^1" >/dev/null; then
		"${G[@]}" diff --name-status -z -M "$sha^1" "$sha" >"$work/diff.z"
		args+=(--changed-files "$work/diff.z")
	fi
	set +e
	"$bin" "${args[@]}" >"$out/$name.txt" 2>"$out/$name.err"
	rc=$?
	set -e
	summary=$({ grep -E '^(plan|policy|file-plan) ' "$out/$name.txt" || true; } | sed -E 's/^([a-z-]+) +/\1 /' | cut -c1-160 | paste -sd ';' -)
	n=$({ grep -oE '^(plan|policy|file-plan) +[0-9]+/[0-9]+' "$out/$name.txt" || true; } | awk -F/ '{ s += $2 } END { print s + 0 }')
	cases=$((cases + n))
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); echo "$name: agree ($summary)"
	elif grep -q "does not know yet\|does not cover" "$out/$name.txt" && ! grep -q '^  - ' "$out/$name.txt"; then
		declined=$((declined + 1)); echo "$name: declined ($summary)"
	else
		differ=$((differ + 1)); echo "$name: DIFFERS ($summary) see $out/$name.txt"
	fi
done <"$list"
echo "states: $((pass + declined + differ)) verified ($pass agree, $declined declined with the §2 message, $differ differ), $nocheckout without a registry; cases compared: $cases; reports: $out"
[ $differ -eq 0 ]
