package usecase

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/radixark/miles-ci/comment"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/pyjson"
)

// CommentRequest is `miles-ci comment` (and the module's comment): one run
// of Miles' comment-command gateway (rules §15) on the checkout's form, or,
// with Ask, the steps its workflow runs for a comment, as a dry run.
type CommentRequest struct {
	// Repo is the checkout whose gateway script and policy apply ("" = .).
	Repo string
	// Getenv is the environment the script reads (GITHUB_EVENT_PATH,
	// CI_COMMAND_* and GITHUB_OUTPUT): the token among it, never in argv.
	Getenv func(string) (string, bool)
	// APIURL is GitHub's REST API root (GITHUB_API_URL; "" = api.github.com).
	APIURL string
	// DryRun sends no call that changes anything and writes no GITHUB_OUTPUT.
	DryRun bool
	// Ask, when set, is a maintainer's question "what would this comment
	// do?": the event is built from it (reading the PR and the actor from the
	// API) and the workflow's steps run in order, as a dry run.
	Ask *CommentQuestion
	// Timeout bounds each API request (0: the script's 15 s).
	Timeout time.Duration
}

// CommentQuestion is a comment to try: its text, the pull request and who
// writes it.
type CommentQuestion struct {
	Body      string
	PR        int
	Actor     string
	CommentID int
}

// Validate checks the request's arguments (flags named as the CLI spells them).
// githubLogin is a GitHub account's login (a bot's ends in [bot]), which
// --actor puts in an API path.
var githubLogin = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$`)

func (r CommentRequest) Validate() error {
	if r.Getenv == nil {
		return errors.New("comment: no environment given")
	}
	if q := r.Ask; q != nil {
		switch {
		case q.PR <= 0:
			return fmt.Errorf("--pr %d is not a pull request number; --body asks what a comment on pull request --pr N by --actor LOGIN would do", q.PR)
		case strings.TrimSpace(q.Actor) == "":
			return errors.New("--actor is required with --body: the GitHub login of who would write the comment")
		case !githubLogin.MatchString(q.Actor):
			return fmt.Errorf("--actor %s is not a GitHub login; give the login of who would write the comment (letters, digits and '-', such as octo-dev)", strconv.Quote(q.Actor))
		case q.CommentID < 0:
			return fmt.Errorf("--comment-id %d is not a comment id; give a positive number or leave it out", q.CommentID)
		}
	}
	return nil
}

// CommentStep is one run of the script: the workflow step it stands for
// and what it did.
type CommentStep struct {
	Step    string          `json:"step"`
	Outcome comment.Outcome `json:"outcome"`
}

// CommentResult is what a gateway run did.
type CommentResult struct {
	// Form is the gateway's form (comment.Forms) and where Miles has it.
	Form  string `json:"form"`
	Miles string `json:"miles"`
	// FromScript: the checkout's script chose the form (false: it has none).
	FromScript bool `json:"from_script"`
	DryRun     bool `json:"dry_run"`
	// Steps are the script's runs: one, or with Ask the workflow's steps.
	Steps []CommentStep `json:"steps"`
	// Skipped says why the workflow's later steps did not run (Ask).
	Skipped  []string  `json:"skipped,omitempty"`
	Messages []Message `json:"-"`
	asked    bool
}

// Last is the final step's outcome.
func (r *CommentResult) Last() comment.Outcome { return r.Steps[len(r.Steps)-1].Outcome }

// commentTimeout is the script's urlopen timeout.
const commentTimeout = 15 * time.Second

// Comment runs the gateway.
func Comment(ctx context.Context, req CommentRequest) (*CommentResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	repo := req.Repo
	if repo == "" {
		repo = "."
	}
	gw, res, err := commentGateway(repo)
	if err != nil {
		return nil, err
	}
	opts := github.Options{APIURL: req.APIURL, Timeout: req.Timeout, TokenFrom: comment.EnvToken}
	if opts.Timeout == 0 {
		opts.Timeout = commentTimeout
	}
	token, _ := req.Getenv(comment.EnvToken)
	if req.Ask != nil && token == "" {
		token = firstEnv(req.Getenv, "GITHUB_TOKEN", "GH_TOKEN")
	}
	opts.Token = token
	client, err := github.NewClient(opts)
	if err != nil {
		return nil, err
	}
	root := strings.TrimSuffix(req.APIURL, "/")
	if root == "" {
		root = strings.TrimSuffix(github.DefaultAPIURL, "/")
	}
	h := &commentHost{ctx: ctx, client: client, root: root, dry: req.DryRun || req.Ask != nil, env: req.Getenv}
	res.DryRun = h.dry
	if req.Ask == nil {
		res.Steps = []CommentStep{{Step: gw.Mode(h), Outcome: gw.Run(h)}}
		return res, nil
	}
	res.asked = true
	return askComment(gw, res, h, req, repo)
}

func firstEnv(getenv func(string) (string, bool), names ...string) string {
	for _, n := range names {
		if v, _ := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// commentGateway is the checkout's gateway: the form its script declares,
// or the newest where it has no script.
func commentGateway(repo string) (comment.Gateway, *CommentResult, error) {
	path := filepath.Join(repo, comment.ScriptFile)
	src, err := fsinput.ReadFile(path, fsinput.Kind{Name: "a comment gateway script", Max: comment.MaxScriptSize})
	if errors.Is(err, fs.ErrNotExist) {
		gw := comment.Default()
		return gw, &CommentResult{Form: gw.Name, Miles: gw.Miles,
			Messages: []Message{Notice(fmt.Sprintf("%s has no %s; the newest form of the gateway applies (%s)", repo, comment.ScriptFile, gw.Name))}}, nil
	}
	if err != nil {
		return comment.Gateway{}, nil, err
	}
	gw, err := comment.Detect(src)
	if err != nil {
		return comment.Gateway{}, nil, fmt.Errorf("%s: %w", repo, err)
	}
	return gw, &CommentResult{Form: gw.Name, Miles: gw.Miles, FromScript: true}, nil
}

// askEventPath is where an asked comment's event is served from (it is
// never on disk).
const askEventPath = "(the event of --body)"

// askComment builds the comment's event and runs the workflow's steps on it.
func askComment(gw comment.Gateway, res *CommentResult, h *commentHost, req CommentRequest, repo string) (*CommentResult, error) {
	q := req.Ask
	ev, err := askEvent(gw, h, q)
	if err != nil {
		return nil, err
	}
	h.files = map[string][]byte{askEventPath: ev}
	policy := filepath.Join(repo, comment.PolicyFile)
	// The workflow always gives the script a token (its App's); the requests
	// carry the caller's, or none.
	base := map[string]string{comment.EnvEventPath: askEventPath, comment.EnvPolicyPath: policy, comment.EnvToken: "(the workflow's App token)",
		comment.EnvOutput: "(GITHUB_OUTPUT of the step)"}
	step := func(name string, env map[string]string) comment.Outcome {
		vars := map[string]string{}
		for k, v := range base {
			vars[k] = v
		}
		for k, v := range env {
			vars[k] = v
		}
		h.env = func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
		o := gw.Run(h)
		res.Steps = append(res.Steps, CommentStep{Step: name, Outcome: o})
		return o
	}
	pre := step("preflight (handle-command: Validate and authorize the command)", map[string]string{comment.EnvPreflight: "true"})
	if pre.Exit != 0 || pre.Crash != "" {
		res.Skipped = append(res.Skipped, "the preflight refused the comment, so the workflow stops there")
		return res, nil
	}
	out := outputsOf(pre.Output)
	capability := out["capability"]
	switch capability {
	case "none", "":
		res.Skipped = append(res.Skipped, "the comment is no command: capability=none, so no later job runs")
		return res, nil
	case "issues":
		step("command (handle-command: Authorize and run the issues command)", nil)
	case "actions":
		step("command (actions-command: Authorize and run the actions command)", nil)
	}
	cmd := res.Last()
	if cmd.Exit != 0 || cmd.Crash != "" {
		res.Skipped = append(res.Skipped, "the command failed, so no later job runs")
		return res, nil
	}
	if !gw.RunDetails || capability != "actions" {
		return res, nil
	}
	if out["success_reaction"] == "+1" {
		step("acknowledge (acknowledge-command: Acknowledge the successful command)", map[string]string{comment.EnvAcknowledge: "true"})
	}
	if url := outputsOf(cmd.Output)["workflow_run_url"]; url != "" {
		step("reply (reply-command: Reply with the workflow run)", map[string]string{comment.EnvReply: "true", comment.EnvRunURL: url})
	} else if cmd.Pending != "" {
		res.Skipped = append(res.Skipped, "reply-command comments with a link to the run GitHub starts, once the dispatch names it")
	}
	return res, nil
}

// outputsOf reads GITHUB_OUTPUT lines (key=value).
func outputsOf(text string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// askEvent is the issue_comment event GitHub would send for the comment:
// the PR and the actor's id come from the API.
func askEvent(gw comment.Gateway, h *commentHost, q *CommentQuestion) ([]byte, error) {
	prPath := fmt.Sprintf("/repos/%s/pulls/%d", gw.Repository, q.PR)
	pr := h.client.Raw(h.ctx, "GET", prPath, nil)
	if pr.Status != 200 {
		return nil, fmt.Errorf("--pr %d: reading %s from %s: %s", q.PR, prPath, h.root, rawProblem(pr))
	}
	login, err := comment.PathQuote(q.Actor)
	if err != nil {
		return nil, fmt.Errorf("--actor %q: %w", q.Actor, err)
	}
	permPath := fmt.Sprintf("/repos/%s/collaborators/%s/permission", gw.Repository, login)
	perm := h.client.Raw(h.ctx, "GET", permPath, nil)
	if perm.Status != 200 {
		return nil, fmt.Errorf("--actor %s: reading %s from %s: %s", q.Actor, permPath, h.root, rawProblem(perm))
	}
	pv, err := pyjson.DecodeBytes(perm.Body, pyjson.Loose)
	var id pyjson.Value
	if err == nil && pv.Kind == pyjson.Dict {
		if u, ok := pv.Dict.Get("user"); ok && u.Kind == pyjson.Dict {
			id, _ = u.Dict.Get("id")
		}
	}
	if !id.PositiveInt() {
		return nil, fmt.Errorf("--actor %s: GitHub's answer to %s names no user id", q.Actor, permPath)
	}
	cid := int64(q.CommentID)
	if cid == 0 {
		cid = 1
	}
	user := pyjson.NewObject("login", pyjson.StrValue(q.Actor), "id", pyjson.BigValue(id.Int), "type", pyjson.StrValue("User"))
	ev := pyjson.NewObject(
		"action", pyjson.StrValue("created"),
		"issue", pyjson.DictValue(pyjson.NewObject("number", pyjson.IntValue(int64(q.PR)),
			"pull_request", pyjson.DictValue(pyjson.NewObject("url", pyjson.StrValue(h.root+prPath))))),
		"comment", pyjson.DictValue(pyjson.NewObject("id", pyjson.IntValue(cid), "body", pyjson.StrValue(q.Body), "user", pyjson.DictValue(user))),
		"repository", pyjson.DictValue(pyjson.NewObject("id", pyjson.BigValue(gw.RepositoryID), "full_name", pyjson.StrValue(gw.Repository))),
		"sender", pyjson.DictValue(pyjson.NewObject("login", pyjson.StrValue(q.Actor), "id", pyjson.BigValue(new(big.Int).Set(id.Int)), "type", pyjson.StrValue("User"))),
	)
	return []byte(pyjson.Dumps(pyjson.DictValue(ev), false)), nil
}

func rawProblem(a github.RawAnswer) string {
	if a.Err != nil {
		return a.Err.Error()
	}
	return "GitHub answered " + strconv.Itoa(a.Status)
}

// commentHost is the gateway's outside world: the environment, files read
// as the script reads them, GITHUB_OUTPUT and the API through go-github.
type commentHost struct {
	ctx    context.Context
	client *github.Client
	root   string
	dry    bool
	env    func(string) (string, bool)
	// files are files served from memory (an asked comment's event).
	files map[string][]byte
}

func (h *commentHost) Getenv(name string) (string, bool) { return h.env(name) }
func (h *commentHost) APIRoot() string                   { return h.root }

func (h *commentHost) ReadFile(path string) ([]byte, error) {
	if data, ok := h.files[path]; ok {
		return data, nil
	}
	// The script opens pathlib.Path(path): "" is ".", "a/" is "a".
	data, err := fsinput.ReadFile(comment.PathString(path), fsinput.Kind{Name: "a file the gateway reads", Max: comment.MaxEventSize})
	if err == nil {
		return data, nil
	}
	var fe *fsinput.Error
	if errors.As(err, &fe) && fe.Err == nil {
		if strings.HasPrefix(fe.Problem, "is a folder") {
			return nil, pyOSError(syscall.EISDIR, path)
		}
		// A FIFO, a device or a file over the bound: the script would block or
		// read it all; miles-ci stops as the script stops on a traceback.
		return nil, &comment.Refused{Msg: err.Error()}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return nil, pyOSError(errno, path)
	}
	return nil, &comment.Refused{Msg: err.Error()}
}

func (h *commentHost) AppendOutput(path, text string) error {
	if h.dry {
		return nil
	}
	err := fsinput.Append(comment.PathString(path), text)
	if errors.Is(err, syscall.ENXIO) {
		// A FIFO that nothing reads, where Python's open would wait for
		// ever: fsinput's message says so at once.
		return err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return pyOSError(errno, path)
	}
	return err
}

func (h *commentHost) Call(c comment.Call) comment.Answer {
	if h.dry && c.Changes() {
		return comment.Answer{NotSent: true}
	}
	var body []byte
	if c.Body != "" {
		body = []byte(c.Body)
	}
	a := h.client.Raw(h.ctx, c.Method, c.Path, body)
	if a.Err == nil {
		return comment.Answer{Status: a.Status, Body: a.Body}
	}
	reason := a.Err.Error()
	if errors.Is(a.Err, syscall.ECONNREFUSED) {
		reason = "[Errno 111] Connection refused"
	}
	return comment.Answer{Failed: reason, TimedOut: a.TimedOut}
}

// pyOSError is Python's OSError of a file operation on path, as str()
// renders it: [Errno N] Message: 'path' (the path as pathlib writes it).
func pyOSError(errno syscall.Errno, path string) error {
	msg := errno.Error()
	if msg != "" {
		r := []rune(msg)
		r[0] = unicode.ToUpper(r[0])
		msg = string(r)
	}
	return fmt.Errorf("[Errno %d] %s: %s", int(errno), msg, pyjson.StrRepr(comment.PathString(path)))
}

// Ask says whether the result answers a tried comment (--body).
func (r *CommentResult) Ask() bool { return r.asked }
