package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/radixark/miles-ci/comment"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/usecase"
)

// CommentMode is the mode the comment gateway's workflow runs its script in (rules §15).
type CommentMode string

const (
	// The command itself (the workflow's issues and actions commands): the default.
	CommentModeCommand CommentMode = comment.ModeCommand
	// Authorize and write the routing outputs (CI_COMMAND_PREFLIGHT).
	CommentModePreflight CommentMode = comment.ModePreflight
	// The +1 reaction on a /rerun-test comment (CI_COMMAND_ACKNOWLEDGE).
	CommentModeAcknowledge CommentMode = comment.ModeAcknowledge
	// A comment linking the dispatched run (CI_COMMAND_REPLY).
	CommentModeReply CommentMode = comment.ModeReply
)

// modeEnv is the environment variable that selects each mode.
var modeEnv = map[CommentMode]string{CommentModePreflight: comment.EnvPreflight, CommentModeAcknowledge: comment.EnvAcknowledge, CommentModeReply: comment.EnvReply}

// CommentRun is one run of Miles' comment-command gateway.
// It is what the checkout's script would have done (`miles-ci comment`).
type CommentRun struct {
	// The gateway's form, as the checkout's script declares it (run-details, run-on-labels, rerun-test, labels).
	Form string
	// What the script prints: its decision as one JSON line, or ::error::REASON (empty when it would stop with a traceback). With body, the last step's.
	Stdout string
	// Its exit status: 0, or 1 on a refusal.
	ExitCode int
	// The lines it appends to GITHUB_OUTPUT (capability, success_reaction, workflow_run_url).
	GithubOutput string
	// Its API calls, in order, one a line: METHOD PATH [BODY], and (not sent) for a change a dry run did not make.
	Calls []string
	// Why the script would stop with a Python traceback ("" when it does not).
	Crash string
	// stdout, github-output and exit-code as files, for a workflow step to print, append to $GITHUB_OUTPUT and exit with.
	Files *dagger.Directory
	// The run as `miles-ci comment --json` prints it.
	Json string
	// The answer's notices and warnings.
	Messages []*Message
}

// Comment runs Miles' comment-command gateway (rules §15) on a PR comment event.
// It does what the checkout's comment_ci_command.py does: the same API
// calls in the same order, the same decision line or refusal, the same
// GITHUB_OUTPUT lines (`miles-ci comment`). With body, pr and actor it
// answers "what would this comment do?": the event is built from them and
// the workflow's steps run as a dry run.
// +cache="never"
func (m *MilesCi) Comment(
	ctx context.Context,
	// The issue_comment event payload (the file at GITHUB_EVENT_PATH); not with body.
	// +optional
	event *dagger.File,
	// The API token the step gives the script (CI_COMMAND_API_TOKEN), e.g. env:CI_COMMAND_API_TOKEN.
	// +optional
	token *dagger.Secret,
	// The script's mode.
	// +optional
	// +default="command"
	mode CommentMode,
	// The dispatched run's link, for the reply mode (CI_COMMAND_WORKFLOW_RUN_URL).
	// +optional
	workflowRunUrl string,
	// The access policy (CI_COMMAND_POLICY_PATH; default the checkout's .github/workflows/policies/comment-command-access.json).
	// +optional
	policy *dagger.File,
	// The GitHub REST API root (GITHUB_API_URL in Actions; default https://api.github.com/).
	// +optional
	apiUrl string,
	// Send no call that changes anything (GETs are sent).
	// +optional
	dryRun bool,
	// A comment to try: its text (with pr and actor; a dry run of the workflow's steps).
	// +optional
	body string,
	// The pull request the tried comment is on.
	// +optional
	pr int,
	// Who writes the tried comment (a GitHub login).
	// +optional
	actor string,
	// The tried comment's id, for the +1 reaction (default 1).
	// +optional
	commentId int,
) (*CommentRun, error) {
	return withExport(ctx, m.Source, func(dir string) (*CommentRun, error) {
		tmp, err := os.MkdirTemp("", "miles-ci-comment-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		env := map[string]string{
			comment.EnvPolicyPath: filepath.Join(dir, comment.PolicyFile),
			comment.EnvOutput:     filepath.Join(tmp, "github-output"),
		}
		if event != nil {
			env[comment.EnvEventPath] = filepath.Join(tmp, "event.json")
			if size, err := event.Size(ctx); err != nil || size > int(fsinput.EventPayload.Max) {
				return nil, fmt.Errorf("--event: %d bytes (%v); an event payload is at most %d", size, err, fsinput.EventPayload.Max)
			}
			if _, err := event.Export(ctx, env[comment.EnvEventPath]); err != nil {
				return nil, fmt.Errorf("export --event: %w", err)
			}
		}
		if policy != nil {
			env[comment.EnvPolicyPath] = filepath.Join(tmp, "policy.json")
			if _, err := policy.Export(ctx, env[comment.EnvPolicyPath]); err != nil {
				return nil, fmt.Errorf("export --policy: %w", err)
			}
		}
		if token != nil {
			plain, err := token.Plaintext(ctx)
			if err != nil {
				return nil, fmt.Errorf("--token: %w", err)
			}
			env[comment.EnvToken] = plain
		}
		if v, ok := modeEnv[mode]; ok {
			env[v] = "true"
		}
		if workflowRunUrl != "" {
			env[comment.EnvRunURL] = workflowRunUrl
		}
		req := usecase.CommentRequest{Repo: dir, APIURL: apiUrl, DryRun: dryRun,
			Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
		if body != "" || pr != 0 || actor != "" {
			req.Ask = &usecase.CommentQuestion{Body: body, PR: pr, Actor: actor, CommentID: commentId}
		} else if event == nil {
			return nil, fmt.Errorf("comment needs --event (the issue_comment payload), or --body, --pr and --actor to try a comment")
		}
		if err := req.Validate(); err != nil {
			return nil, err
		}
		res, err := usecase.Comment(ctx, req)
		if err != nil {
			return nil, err
		}
		return commentRun(res)
	})
}

// commentRun is the module's answer of a gateway run.
func commentRun(res *usecase.CommentResult) (*CommentRun, error) {
	js, err := jsonString(res)
	if err != nil {
		return nil, err
	}
	last := res.Last()
	run := &CommentRun{Form: res.Form, Stdout: last.Stdout, ExitCode: last.Exit, GithubOutput: last.Output, Crash: last.Crash,
		Json: js, Messages: messagesOf(res.Messages), Calls: []string{}}
	for _, st := range res.Steps {
		for _, c := range st.Outcome.Calls {
			line := c.Call.String()
			if !c.Sent {
				line += " (not sent)"
			}
			run.Calls = append(run.Calls, line)
		}
	}
	run.Files = dag.Directory().
		WithNewFile("stdout", run.Stdout).
		WithNewFile("github-output", run.GithubOutput).
		WithNewFile("exit-code", strconv.Itoa(run.ExitCode)+"\n")
	return run, nil
}
