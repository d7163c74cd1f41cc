# Sourced by hack/e2e.sh: the module's --pr arguments against the GitHub API stand-in
# (github/githubtest/standin, recorded answers in testdata/github). The module runtime
# reaches a stand-in served in the engine's network namespace at the bridge gateway
# (engine.sh serve); the CLI reads a second one on loopback. Checks that
#   - `--pr 2874 stage ... shard ... plan`, `--pr 2874 plan` and `--pr 2874 policy` print what
#     `miles-ci plan --pr 2874 ...` and `miles-ci policy --pr 2874 ...` print,
#   - a fork PR's `spec` is `miles-ci run --pr 2901 ... --dry-run --json` (no secrets),
#   - the token given as a Dagger secret reaches the API and no output or error holds it,
#   - --pr with --event fails before GitHub is asked,
#   - the module's comment gives the CLI's line and GITHUB_OUTPUT (preflight and command of a
#     /run-ci-short that changes nothing), and a tried comment's dispatch is shown, not sent.
# shellcheck shell=bash disable=SC2154 # hack/e2e.sh sources this file and sets $out, $engine and the rest

echo "=== RUN --pr (module against the GitHub API stand-in)"
go build -o "$out/standin" ./github/githubtest/standin
pr_fixtures=testdata/github
gw=$(bash "$engine" serve ip -4 -o addr show dagger0 2>/dev/null | awk '{print $4}' | cut -d/ -f1 || true)
if [[ ! -d $pr_fixtures || -z $gw ]]; then
	bad "--pr (no recorded answers, or no engine bridge to serve them on: engine.sh serve needs the local engine)"
else
	bash "$engine" serve "$out/standin" -listen "$gw:0" "$pr_fixtures" >"$out/api-engine" 2>"$out/api-engine.log" &
	api_engine_pid=$!
	"$out/standin" "$pr_fixtures" >"$out/api-local" 2>/dev/null &
	api_local_pid=$!
	trap 'kill "$api_engine_pid" "$api_local_pid" 2>/dev/null || true; rm -rf "$out"' EXIT
	for _ in $(seq 50); do
		[[ -s $out/api-engine && -s $out/api-local ]] && break
		sleep 0.1
	done
	engine_api=$(sed -n 's/^GITHUB_API_URL=//p' "$out/api-engine")
	export GITHUB_API_URL
	GITHUB_API_URL=$(sed -n 's/^GITHUB_API_URL=//p' "$out/api-local")
	export GITHUB_TOKEN=ghp_e2eTokenThatMustNeverBePrinted0042

	leaked() { # leaked NAME: fails the check when an output of the last call holds the token
		if grep -qF "$GITHUB_TOKEN" "$out/got" "$out/got.err" "$out/api-engine.log" 2>/dev/null; then
			bad "$1 (the token was printed)"
		else
			ok "$1"
		fi
	}

	same "call --pr stage shard plan" plan --pr 2874 --repo "$fixture" --hw cuda --suite stage-c-4-gpu-h200 \
		--auto-partition-id 0 --auto-partition-size 3 --json \
		-- --source "$fixture" with-pr --number 2874 --token env:GITHUB_TOKEN --api-url "$engine_api" \
		stage --name stage-c-4-gpu-h200 shard --number 1 plan json
	leaked "call --pr: no output holds the token"
	if grep -q '^GET /repos/radixark/miles/pulls/2874 (with a token)$' "$out/api-engine.log" &&
		grep -q '^GET /repos/radixark/miles/pulls/2874/files?page=3&per_page=100 (with a token)$' "$out/api-engine.log"; then
		ok "call --pr: the token reached the API, the changed files to the last page"
	else
		cat "$out/api-engine.log"
		bad "call --pr: the API saw no token or not every page"
	fi

	same "call --pr plan" plan --pr 2874 --repo "$fixture" --hw cuda --suite stage-c-4-gpu-h200 \
		--auto-partition-id 0 --auto-partition-size 3 --json \
		-- --source "$fixture" with-pr --number 2874 --api-url "$engine_api" \
		plan --hw cuda --suite stage-c-4-gpu-h200 --auto-partition-id 0 --auto-partition-size 3 json
	same "call --pr policy" policy --pr 2874 --repo "$fixture" --json \
		-- --source "$fixture" with-pr --number 2874 --api-url "$engine_api" policy json

	same "call --pr fork spec" run --pr 2901 --repo "$fixture" --stage stage-c-4-gpu-h200 --shard 2 --dry-run --json \
		-- --source "$fixture" with-pr --number 2901 --api-url "$engine_api" stage --name stage-c-4-gpu-h200 shard --number 2 spec json
	if grep -q '"secrets_withheld": "a pull request from a fork gets no secrets' "$out/got" &&
		dagger call --source "$fixture" with-pr --number 2901 --api-url "$engine_api" stage --name stage-c-4-gpu-h200 shard --number 2 \
			spec messages text >"$out/got" 2>"$out/got.err" && grep -q "CI skips stage-c-4-gpu-h200 on radixark/miles#2901" "$out/got"; then
		ok "call --pr fork: no secrets, and the stage CI skips on the PR is named"
	else
		bad "call --pr fork: secrets not withheld or the skip not named"
	fi

	echo "=== RUN call --pr errors"
	if dagger call --source "$fixture" with-pr --number 2874 --token env:GITHUB_TOKEN --api-url "http://$gw:1/" \
		stage --name stage-b-cpu plan >"$out/got" 2>"$out/got.err"; then
		bad "call --pr unreachable API (wanted a failure)"
	elif grep -q "reading pull request radixark/miles#2874: " "$out/got.err"; then
		leaked "call --pr unreachable API: the error names the PR, not the token"
	else
		tail -n 10 "$out/got.err"
		bad "call --pr unreachable API (the error does not name the PR)"
	fi
	if dagger call --source "$fixture" with-pr --number 2874 --api-url "http://$gw:1/" \
		stage --name stage-b-cpu --event schedule --schedule "0 15 * * 6" plan >"$out/got" 2>"$out/got.err"; then
		bad "call --pr --event (wanted a failure)"
	elif grep -q -- "--event conflicts with --pr" "$out/got.err"; then
		ok "call --pr --event fails before GitHub is asked"
	else
		tail -n 10 "$out/got.err"
		bad "call --pr --event (the error does not say why)"
	fi

	echo "=== RUN call comment (the comment gateway against the stand-in)"
	# A maintainer's /run-ci-short on PR 2990, which has the label already: the
	# preflight and the command read the permission and the PR and change nothing.
	printf '%s\n' '{"action":"created","issue":{"number":2990,"pull_request":{}},"comment":{"id":41,"body":"/run-ci-short","user":{"login":"octo-dev","id":5101,"type":"User"}},"sender":{"id":5101},"repository":{"id":1072725553,"full_name":"radixark/miles"}}' >"$out/comment-event.json"
	gateway=testdata/miles-comment
	for mode in preflight command; do
		vars=(GITHUB_EVENT_PATH="$out/comment-event.json" CI_COMMAND_POLICY_PATH="$gateway/.github/workflows/policies/comment-command-access.json" CI_COMMAND_API_TOKEN="$GITHUB_TOKEN")
		[[ $mode == preflight ]] && vars+=(CI_COMMAND_PREFLIGHT=true)
		env "${vars[@]}" GITHUB_OUTPUT="$out/want-output" "$out/miles-ci" comment --repo "$gateway" >"$out/want" 2>"$out/want.err" || true
		rm -rf "$out/comment"
		if ! dagger call --source "$gateway" comment --event "$out/comment-event.json" --token env:GITHUB_TOKEN --api-url "$engine_api" \
			--mode "$mode" files export --path "$out/comment" >"$out/got" 2>"$out/got.err"; then
			tail -n 20 "$out/got.err"
			bad "call comment $mode (dagger call failed)"
		elif cmp -s "$out/want" "$out/comment/stdout" && cmp -s <(cat "$out/want-output" 2>/dev/null) "$out/comment/github-output" &&
			[[ $(cat "$out/comment/exit-code") == 0 ]]; then
			leaked "call comment $mode: the script's line and GITHUB_OUTPUT are the CLI's"
		else
			diff -u "$out/want" "$out/comment/stdout" | head -n 10 || true
			bad "call comment $mode (stdout, GITHUB_OUTPUT or exit code differ from the CLI)"
		fi
		rm -f "$out/want-output"
	done
	if dagger call --source "$gateway" comment --pr 2990 --actor octo-dev --body "/rerun-test tests/e2e/short/test_gateway.py" \
		--api-url "$engine_api" calls >"$out/got" 2>"$out/got.err" &&
		grep -q '^POST /repos/radixark/miles/actions/workflows/run-ci-file.yml/dispatches .*(not sent)$' "$out/got" &&
		! grep -q '^POST ' "$out/api-engine.log"; then
		ok "call comment --body: the dispatch is shown, not sent"
	else
		cat "$out/got" "$out/got.err" | tail -n 20
		bad "call comment --body (the dispatch not shown, or a change reached the API)"
	fi

	kill "$api_engine_pid" "$api_local_pid" 2>/dev/null || true
	wait "$api_engine_pid" "$api_local_pid" 2>/dev/null || true
	trap 'rm -rf "$out"' EXIT
	unset GITHUB_API_URL GITHUB_TOKEN
fi
