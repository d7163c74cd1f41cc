package workflows

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// The comment-command gateway's workflow (rules §15): Miles'
// comment-ci-command.yml, its jobs, if:s, outputs and App tokens, whose
// steps run the script's modes through the module's comment function.

// commentFile is the gateway workflow's file name.
const commentFile = "comment-ci-command.yml"

// appToken is the step that mints the job's GitHub App token with the
// given permissions (the gateway's App: vars.CI_COMMAND_APP_ID and the
// secret CI_COMMAND_APP_PRIVATE_KEY).
func appToken(id, name, cond string, permissions ...string) *yaml.Node {
	with := []pair{kvs("app-id", "${{ vars.CI_COMMAND_APP_ID }}"), kvs("private-key", "${{ secrets.CI_COMMAND_APP_PRIVATE_KEY }}")}
	for i := 0; i+1 < len(permissions); i += 2 {
		with = append(with, kvs("permission-"+permissions[i], permissions[i+1]))
	}
	step := []pair{kvs("name", name)}
	if cond != "" {
		step = append(step, kvs("if", cond))
	}
	return mapping(append(step, kvs("id", id), kvs("uses", "actions/create-github-app-token@v2"), kv("with", mapping(with...)))...)
}

// gatewayCheckout checks out the event's commit: the default branch's
// workflow, script and policy, never the pull request's.
func gatewayCheckout() *yaml.Node {
	return mapping(kvs("name", "Check out the trusted gateway script and policy"), kvs("uses", "actions/checkout@v4"), kv("with", mapping(
		kvs("ref", "${{ github.sha }}"),
		kv("persist-credentials", boolean(false)),
		kv("sparse-checkout", block(".github/workflows/scripts/comment_ci_command.py", ".github/workflows/policies/comment-command-access.json")),
		kv("sparse-checkout-cone-mode", boolean(false)),
	)))
}

var installDagger = mapping(
	kvs("name", "Install Dagger"),
	kv("run", block(
		`curl -fsSL https://dl.dagger.io/dagger/install.sh | BIN_DIR="$HOME/.local/bin" sh`,
		`echo "$HOME/.local/bin" >> "$GITHUB_PATH"`,
	)),
)

// gatewayStep runs the script's mode through the module: it prints what the
// script prints, appends its GITHUB_OUTPUT lines and exits with its status.
func gatewayStep(name, id, cond, token, mode string, env ...pair) *yaml.Node {
	env = append([]pair{kvs("CI_COMMAND_API_TOKEN", token)}, env...)
	args := `--mode ` + mode
	if mode == "reply" {
		args += ` --workflow-run-url "$WORKFLOW_RUN_URL"`
	}
	step := []pair{kvs("name", name)}
	if id != "" {
		step = append(step, kvs("id", id))
	}
	if cond != "" {
		step = append(step, kvs("if", cond))
	}
	step = append(step, kv("env", mapping(env...)), kv("run", block(
		"set -euo pipefail",
		`out="$RUNNER_TEMP/comment-`+mode+`"`,
		`dagger call -m "$MILES_CI_MODULE" --source . comment --event "$GITHUB_EVENT_PATH" --token env:CI_COMMAND_API_TOKEN \`,
		`  --api-url "$GITHUB_API_URL" `+args+` files export --path "$out"`,
		`cat "$out/stdout"`,
		`cat "$out/github-output" >> "$GITHUB_OUTPUT"`,
		`exit "$(cat "$out/exit-code")"`,
	)))
	return mapping(step...)
}

// commentWorkflow is comment-ci-command.yml.
func commentWorkflow(o Options) (File, error) {
	const enabled = "vars.CI_COMMAND_APP_ENABLED == 'true' &&\ngithub.event.issue.pull_request != null &&\ngithub.event.comment.user.type == 'User'"
	handle := mapping(
		kvs("if", enabled),
		kv("outputs", mapping(
			kvs("capability", "${{ steps.authorize.outputs.capability }}"),
			kvs("success_reaction", "${{ steps.authorize.outputs.success_reaction }}"),
		)),
		kvs("runs-on", "ubuntu-latest"),
		kv("timeout-minutes", integer(10)),
		kv("steps", seq(
			gatewayCheckout(),
			installDagger,
			gatewayStep("Validate and authorize the command", "authorize", "", "${{ github.token }}", "preflight"),
			mapping(kvs("name", "Reject unknown routing outputs"),
				kvs("if", "(steps.authorize.outputs.capability != 'none' &&\n steps.authorize.outputs.capability != 'issues' &&\n steps.authorize.outputs.capability != 'actions') ||\n(steps.authorize.outputs.success_reaction != 'none' &&\n steps.authorize.outputs.success_reaction != '+1')"),
				kv("run", str("exit 1"))),
			appToken("issues-token", "Mint the issues-scoped App token", "steps.authorize.outputs.capability == 'issues'", "issues", "write", "pull-requests", "read"),
			gatewayStep("Authorize and run the issues command", "", "steps.authorize.outputs.capability == 'issues'", "${{ steps.issues-token.outputs.token }}", "command"),
		)),
	)
	actions := mapping(
		kv("needs", flow("handle-command")),
		kv("outputs", mapping(kvs("workflow_run_url", "${{ steps.run-command.outputs.workflow_run_url }}"))),
		kvs("if", "needs.handle-command.outputs.capability == 'actions'"),
		kv("concurrency", mapping(
			kvs("group", "comment-ci-actions-${{ github.event.issue.number }}"),
			kv("cancel-in-progress", boolean(false)),
		)),
		kvs("runs-on", "ubuntu-latest"),
		kv("timeout-minutes", integer(10)),
		kv("steps", seq(
			gatewayCheckout(),
			installDagger,
			appToken("actions-token", "Mint the actions-scoped App token", "", "actions", "write", "pull-requests", "read"),
			gatewayStep("Authorize and run the actions command", "run-command", "", "${{ steps.actions-token.outputs.token }}", "command"),
		)),
	)
	ack := mapping(
		kv("needs", flow("handle-command", "actions-command")),
		kvs("if", "needs.actions-command.result == 'success' &&\nneeds.handle-command.outputs.success_reaction == '+1'"),
		kvs("runs-on", "ubuntu-latest"),
		kv("timeout-minutes", integer(10)),
		kv("steps", seq(
			gatewayCheckout(),
			installDagger,
			appToken("reaction-token", "Mint the reaction-scoped App token", "", "issues", "write"),
			gatewayStep("Acknowledge the successful command", "", "", "${{ steps.reaction-token.outputs.token }}", "acknowledge"),
		)),
	)
	reply := mapping(
		kv("needs", flow("actions-command")),
		kvs("if", "needs.actions-command.result == 'success' &&\nneeds.actions-command.outputs.workflow_run_url != ''"),
		kvs("runs-on", "ubuntu-latest"),
		kv("timeout-minutes", integer(10)),
		kv("steps", seq(
			gatewayCheckout(),
			installDagger,
			appToken("reply-token", "Mint the reply-scoped App token", "", "issues", "write"),
			gatewayStep("Reply with the workflow run", "", "", "${{ steps.reply-token.outputs.token }}", "reply",
				kvs("WORKFLOW_RUN_URL", "${{ needs.actions-command.outputs.workflow_run_url }}")),
		)),
	)
	root := mapping(
		kvs("name", "Comment command gateway"),
		kvs("run-name", "Comment command by ${{ github.event.comment.user.login }}"),
		kv("on", mapping(kv("issue_comment", mapping(kv("types", flow("created")))))),
		kv("permissions", mapping(kvs("contents", "read"))),
		kv("env", mapping(
			kvs("MILES_CI_MODULE", modulePath+"@"+o.Ref),
			kv("DAGGER_VERSION", quoted(o.DaggerVersion)),
		)),
		kv("jobs", mapping(
			kv("handle-command", handle),
			kv("actions-command", actions),
			kv("acknowledge-command", ack),
			kv("reply-command", reply),
		)),
	)
	root.HeadComment = "Code generated by `miles-ci workflows`; DO NOT EDIT.\n" +
		"Miles' comment-command gateway (comment-ci-command.yml, rules §15): its jobs, routing and App tokens,\n" +
		"each mode of its script run by the miles-ci Dagger module's comment function."
	data, err := encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}})
	if err != nil {
		return File{}, fmt.Errorf("encoding %s: %w", commentFile, err)
	}
	return File{Name: commentFile, Data: data}, nil
}
