# The "CI failed on my PR" guide (docs/when-ci-fails.md) as a tested path, a check of
# hack/e2e.sh (sourced by it: uses ok, bad, $out, $engine): every `miles-ci` command of the
# guide's ```sh blocks runs in order, exactly as written, on a failing fixture that plays
# the guide's case: PR 2542 of a checkout whose stage-a-cpu shard 2/4 holds
# tests/fast/utils/test_arguments.py, which the PR's head breaks (its merge base passes).
# The commands run in one network namespace with only loopback, beside the GitHub API
# stand-in serving the PR's recorded answers (written here for the fixture's commit), with
# the runtime history in a file of $out (MILES_CI_HISTORY_DB) and `miles-ci` on PATH.
# What each command must do is in `steps` below, in the guide's order: a guide command the
# list lacks, or one it has that the guide lost, fails the suite, so the guide and this check
# change together. Every results folder the steps read (report, --rerun-failed, triage
# --results) is the one `ci` wrote, through the one reader of results folders: a layout
# change under it fails here.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

set +e
echo "=== RUN the guide: docs/when-ci-fails.md's commands in order, as written"
fxg=$out/fx-guide
# shellcheck source=hack/e2e/ci-fixture.sh
source hack/e2e/ci-fixture.sh
gitq() { git -C "$1" -c user.name=e2e -c user.email=e2e@example.com -c commit.gpgsign=false "${@:2}"; }
# The guide's file, at the merge base: a fixture of the arguments test that passes. Its
# est_time (and test_a0's) put it in stage-a-cpu's shard 2/4, as the guide's case has it.
mkdir -p "$fxg/tests/fast/utils"
printf 'from tests.ci.ci_register import register_cpu_ci\n\nregister_cpu_ci(est_time=10, suite="stage-a-cpu")\n\n\ndef test_ok():\n    pass\n' >"$fxg/tests/fast/test_a0.py"
cat >"$fxg/tests/fast/utils/test_arguments.py" <<'PY'
from tests.ci.ci_register import register_cpu_ci

register_cpu_ci(est_time=6, suite="stage-a-cpu")


def _parse(**given):
    args = {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1}
    args.update(given)
    return args


def test_parallel_defaults():
    assert _parse()["tensor_model_parallel_size"] == 1
PY
gitq "$fxg" init -q -b main && gitq "$fxg" add -A && gitq "$fxg" commit -q -m base &&
	gitq "$fxg" update-ref refs/remotes/origin/main main && gitq "$fxg" checkout -q -b checksum-args
# The PR's head: a test class whose fixture misses the parallelism defaults (it fails).
cat >>"$fxg/tests/fast/utils/test_arguments.py" <<'PY'


class TestChecksumArguments:
    def _parse(self, **given):
        return dict(given)

    def test_checksum_flag(self):
        assert self._parse(checksum=True)["tensor_model_parallel_size"] == 1
PY
gitq "$fxg" commit -q -am "add checksum argument tests"
guide_api=$out/guide-api
python3 - "$guide_api" "$(gitq "$fxg" rev-parse HEAD)" "$(gitq "$fxg" rev-parse main)" testdata/github/repos/radixark/miles/pulls/2874.json <<'PY'
import json, os, sys
api, head, base, like = sys.argv[1:5]
pr = json.load(open(like))
pr.update(number=2542, title="Gate inference engine weight checksums behind their own flag", body="", labels=[], changed_files=1,
          merge_commit_sha="0" * 40, html_url="https://github.com/radixark/miles/pull/2542",
          url="https://api.github.com/repos/radixark/miles/pulls/2542")
pr["head"].update(ref="checksum-args", sha=head, label="radixark:checksum-args")
pr["base"].update(sha=base)
d = os.path.join(api, "repos", "radixark", "miles", "pulls")
os.makedirs(os.path.join(d, "2542"), exist_ok=True)
json.dump(pr, open(os.path.join(d, "2542.json"), "w"), indent=1)
f = "tests/fast/utils/test_arguments.py"
json.dump([{"sha": "1" * 40, "filename": f, "status": "modified", "additions": 9, "deletions": 0, "changes": 9,
            "patch": "@@ -12,0 +13,9 @@\n+class TestChecksumArguments:"}], open(os.path.join(d, "2542", "files.json"), "w"), indent=1)
PY

# The guide's commands, in order: each line of a ```sh block that runs miles-ci.
python3 - docs/when-ci-fails.md >"$out/guide.cmds" <<'PY'
import sys
block = False
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("```"):
        block = line == "```sh"
        continue
    if block and line.startswith("miles-ci "):
        print(line)
PY

# steps: each guide command (up to its comment), the exit it must give, and a line of its
# stdout (a fixed string) that says it did the guide's step.
steps=(
	"miles-ci ci --pr 2542 --gpus 0-7 --results ci-results|1|failed: pr-test/stage-a-cpu shard 2/4: tests/fast/utils/test_arguments.py fail"
	"miles-ci report --results ci-results|1|failed: pr-test/stage-a-cpu shard 2/4: tests/fast/utils/test_arguments.py fail"
	"miles-ci run --stage stage-a-cpu --shard 2 --pr 2542 --gpus none --results shard-results|1|tests/fast/utils/test_arguments.py"
	"miles-ci file-run --file tests/fast/utils/test_arguments.py --pr 2542 --gpus none --results file-results|1|tests/fast/utils/test_arguments.py"
	"miles-ci ci --pr 2542 --gpus 0-7 --rerun-failed ci-results|1|reused (attempt 1)"
	"miles-ci triage --file tests/fast/utils/test_arguments.py --pr 2542 --gpus none|1|tests/fast/utils/test_arguments.py  regression  head 0 pass / 3 fail, base 3 pass / 0 fail"
	"miles-ci triage --results ci-results --base origin/main --gpus none --attempts 5 --budget 2h|1|tests/fast/utils/test_arguments.py  regression  head 0 pass / 5 fail, base 5 pass / 0 fail"
	"miles-ci history trend tests/fast/utils/test_arguments.py|0|  FAIL "
	"miles-ci history flaky|0|no flaky test file"
)
mapfile -t cmds <"$out/guide.cmds"
want=()
for s in "${steps[@]}"; do want+=("${s%%|*}"); done
got=()
for c in "${cmds[@]}"; do got+=("$(sed -E 's/[[:space:]]+#.*$//; s/[[:space:]]+$//' <<<"$c")"); done
if [[ "${got[*]}" != "${want[*]}" ]]; then
	diff <(printf '%s\n' "${want[@]}") <(printf '%s\n' "${got[@]}")
	bad "the guide: its commands are not the ones this check runs (above: - this check, + the guide); change the two together"
else
	mkdir -p "$out/guide-bin" && ln -sf "$out/miles-ci" "$out/guide-bin/miles-ci" && go build -o "$out/guide-bin/standin" ./github/githubtest/standin
	# One namespace for the stand-in and the commands: the commands reach it on loopback.
	guide_t0=$SECONDS
	bash "$engine" run bash -c '
		out=$1 fxg=$2 api=$3
		"$out/guide-bin/standin" "$api" >"$out/guide-api.url" 2>/dev/null &
		standin=$!
		for _ in $(seq 50); do [[ -s $out/guide-api.url ]] && break; sleep 0.1; done
		export GITHUB_API_URL=$(sed -n "s/^GITHUB_API_URL=//p" "$out/guide-api.url")
		export GITHUB_TOKEN=ghp_e2eGuideTokenNeverPrinted0042 MILES_CI_HISTORY_DB=$out/guide-history.db PATH=$out/guide-bin:$PATH
		cd "$fxg" || exit 1
		i=0
		while IFS= read -r line; do
			i=$((i + 1))
			echo "--- guide step $i: $line" >&2
			bash -c "$line" >"$out/guide.$i.out" 2>"$out/guide.$i.err" </dev/null
			echo $? >"$out/guide.$i.rc"
		done <"$out/guide.cmds"
		kill "$standin"
	' bash "$out" "$fxg" "$guide_api"
	for i in "${!steps[@]}"; do
		n=$((i + 1))
		IFS='|' read -r cmd rc line <<<"${steps[$i]}"
		if [[ $(cat "$out/guide.$n.rc" 2>/dev/null) == "$rc" ]] && grep -qF -- "$line" "$out/guide.$n.out"; then
			ok "the guide, step $n: $cmd (exit $rc)"
		else
			tail -n 20 "$out/guide.$n.out" "$out/guide.$n.err"
			bad "the guide, step $n: $cmd (wanted exit $rc and \"$line\", got exit $(cat "$out/guide.$n.rc" 2>/dev/null))"
		fi
	done
	# What the steps left, read back as the next step reads it.
	if python3 - "$fxg" <<'PY'
import json, os, sys
fx = sys.argv[1]
ci = json.load(open(os.path.join(fx, "ci-results", "summary.json")))
jobs = {(j["job"], j["shard"]): j for j in ci["jobs"]}
failed = jobs[("pr-test/stage-a-cpu", 1)]
assert failed["state"] == "failed" and failed["run_attempt"] == 2 and failed["results"] == "stage-a-cpu/2-of-4", failed
for s in (0, 2, 3):
    j = jobs[("pr-test/stage-a-cpu", s)]
    assert j["reused"] and j["run_attempt"] == 1 and j["summary_sha256"], j
shard = json.load(open(os.path.join(fx, "ci-results", "stage-a-cpu", "2-of-4", "summary.json")))
assert shard["shard"] == {"id": 1, "size": 4}, shard["shard"]
assert not any(j["state"] == "passed" and j.get("gpus") for j in ci["jobs"]), "a GPU stage ran"
for name in ("shard-results", "file-results", "miles-ci-triage"):
    assert os.path.isfile(os.path.join(fx, name, "report.html")), name
assert not [f for f in os.listdir(fx) if f.endswith(".miles-ci-lock")], os.listdir(fx)
PY
	then
		ok "the guide: the ci folder (shard 2/4 failed in attempt 2, the others reused with their digests), the reproductions' and triage's folders, no lock file left ($((SECONDS - guide_t0)) s for the guide's steps)"
	else
		bad "the guide: the folders the steps left"
	fi
fi
