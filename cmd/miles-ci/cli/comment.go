package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("comment", "run Miles' comment-command gateway on a PR comment event, as its script does (or --body: what a comment would do)", runComment)
}

// commentTimeout bounds a whole gateway run (the script waits 15 s per request).
const commentTimeout = 10 * time.Minute

func runComment(args []string, env Env) int {
	fs := newFlagSet("comment", "[--repo DIR] [--dry-run] [--json] [--body TEXT --pr N --actor LOGIN [--comment-id N]]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout whose gateway script and policy apply (default: the current folder)")
	dry := fs.Bool("dry-run", "send no API call that changes anything (GETs are sent) and write no GITHUB_OUTPUT; print the calls")
	asJSON := fs.Bool("json", "print every step, call and outcome as JSON")
	body := fs.String("body", "TEXT", "try a comment: the event is built from --body, --pr and --actor, and the workflow's steps run as a dry run")
	pr := fs.Int("pr", "N", "the pull request the tried comment is on (with --body)", 1, 1<<31-1)
	actor := fs.String("actor", "LOGIN", "who writes the tried comment (with --body)")
	commentID := fs.Int("comment-id", "N", "the tried comment's id, for the +1 reaction (with --body; default 1)", 1, 1<<62)
	fs.check(func() error {
		if !fs.Given("body") && (fs.Given("pr") || fs.Given("actor") || fs.Given("comment-id")) {
			return fmt.Errorf("--pr, --actor and --comment-id go with --body (try a comment); without it the event is GITHUB_EVENT_PATH's")
		}
		return nil
	})
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	apiURL, _ := env.lookupEnv("GITHUB_API_URL")
	req := usecase.CommentRequest{Repo: *repo, Getenv: env.lookupEnv, APIURL: apiURL, DryRun: *dry}
	if fs.Given("body") {
		req.Ask = &usecase.CommentQuestion{Body: *body, PR: pr.Value, Actor: *actor, CommentID: commentID.Value}
	}
	if err := req.Validate(); err != nil {
		return fs.usageError("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), commentTimeout)
	defer cancel()
	res, err := usecase.Comment(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	printMessages(env, res.Messages)
	last := res.Last()
	switch {
	case *asJSON:
		if code := printJSON(env, res); code != 0 {
			return code
		}
	case res.DryRun:
		io.WriteString(env.Stdout, commentReport(res))
	default:
		// The script's own line, byte for byte: its decision (ASCII JSON) or
		// the ::error:: workflow command it prints, which the workflow reads
		// as the script's, so it is written as it is.
		writeCommands(env.Stdout, last.Stdout)
	}
	if last.Crash != "" {
		fmt.Fprintf(env.Stderr, "miles-ci comment: Miles' script stops here with a Python traceback (exit 1): %s\n", last.Crash)
	}
	if res.DryRun && res.Ask() {
		return 0
	}
	return last.Exit
}

// commentReport is a dry run as text: each step's calls (sent or not), its
// GITHUB_OUTPUT lines and the line the script prints.
func commentReport(res *usecase.CommentResult) string {
	var b strings.Builder
	source := "the checkout's comment_ci_command.py"
	if !res.FromScript {
		source = "the newest; the checkout has no comment_ci_command.py"
	}
	fmt.Fprintf(&b, "Comment gateway form %s (%s); dry run: no change is sent, each is taken as confirmed\n", res.Form, source)
	for _, st := range res.Steps {
		o := st.Outcome
		fmt.Fprintf(&b, "\n%s:\n", st.Step)
		for _, c := range o.Calls {
			switch {
			case c.Sent:
				fmt.Fprintf(&b, "  %s -> %d\n", c.Call, c.Status)
			default:
				fmt.Fprintf(&b, "  would %s (not sent)\n", c.Call)
			}
		}
		if o.Output != "" {
			fmt.Fprintf(&b, "  GITHUB_OUTPUT (not written): %s\n", strings.ReplaceAll(strings.TrimSuffix(o.Output, "\n"), "\n", " "))
		}
		switch {
		case o.Pending != "":
			fmt.Fprintf(&b, "  then: %s\n", o.Pending)
		case o.Crash != "":
			fmt.Fprintf(&b, "  the script stops with a Python traceback: %s\n", o.Crash)
		default:
			fmt.Fprintf(&b, "  prints: %s  exit %d\n", strings.TrimSuffix(o.Stdout, "\n"), o.Exit)
		}
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(&b, "\nthen: %s\n", s)
	}
	return b.String()
}
