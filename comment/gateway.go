// Package comment is Miles' comment-command gateway (rules §15) as a pure
// decision: an issue_comment event, the access policy and GitHub's answers
// in; the API calls, the line the script prints, its exit status and its
// GITHUB_OUTPUT lines out. It follows the checkout's own script
// (.github/workflows/scripts/comment_ci_command.py), in each of the forms
// it took (Forms, picked by Detect), and reads JSON as its Python does
// (package pyjson). Everything outside (the environment, files, the API)
// comes through a Host.
package comment

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/pyjson"
)

// The environment the script reads (the workflow sets it).
const (
	EnvEventPath   = "GITHUB_EVENT_PATH"
	EnvPolicyPath  = "CI_COMMAND_POLICY_PATH"
	EnvToken       = "CI_COMMAND_API_TOKEN"
	EnvPreflight   = "CI_COMMAND_PREFLIGHT"
	EnvAcknowledge = "CI_COMMAND_ACKNOWLEDGE"
	EnvReply       = "CI_COMMAND_REPLY"
	EnvRunURL      = "CI_COMMAND_WORKFLOW_RUN_URL"
	EnvOutput      = "GITHUB_OUTPUT"
)

// Host is the gateway's outside world.
type Host interface {
	// Getenv is os.environ: the value and whether the variable is set.
	Getenv(name string) (string, bool)
	// ReadFile reads a file the script opens (the event, the policy); its
	// error's text is Python's OSError's (str(error)).
	ReadFile(path string) ([]byte, error)
	// AppendOutput appends text to the file at path (GITHUB_OUTPUT), its
	// error's text Python's OSError's.
	AppendOutput(path, text string) error
	// Call makes one API call (or, in a dry run, not a change).
	Call(Call) Answer
	// APIRoot is the API's root URL without a trailing slash (the script's
	// API_ROOT), which a dispatch's run_url must start with.
	APIRoot() string
}

// Outcome is what one run of the script does.
type Outcome struct {
	// Mode is the mode the environment selected: preflight, command,
	// acknowledge or reply.
	Mode string `json:"mode"`
	// Calls are its API calls, in order.
	Calls []Record `json:"calls"`
	// Stdout is what it prints: one line ending in "\n" ("" when it crashes).
	Stdout string `json:"stdout"`
	// Exit is its exit status.
	Exit int `json:"exit"`
	// Output is what it appended to GITHUB_OUTPUT.
	Output string `json:"github_output"`
	// Decision is the decision of the printed JSON ("" for none).
	Decision string `json:"decision,omitempty"`
	// Crash says why Python would stop with a traceback (exit 1, nothing
	// printed); "" when it does not.
	Crash string `json:"crash,omitempty"`
	// Pending: a dry run stopped at a change whose answer decides the rest
	// (what the script does then); Stdout is empty.
	Pending string `json:"pending,omitempty"`
}

// Modes of the script, as the workflow sets them.
const (
	ModePreflight   = "preflight"
	ModeCommand     = "command"
	ModeAcknowledge = "acknowledge"
	ModeReply       = "reply"
)

// Mode is the mode the environment selects in this form.
func (g Gateway) Mode(h Host) string {
	on := func(name string) bool { v, _ := h.Getenv(name); return v == "true" }
	switch {
	case g.RunDetails && on(EnvAcknowledge):
		return ModeAcknowledge
	case g.RunDetails && on(EnvReply):
		return ModeReply
	case on(EnvPreflight):
		return ModePreflight
	}
	return ModeCommand
}

// run is one run's state.
type run struct {
	g     Gateway
	h     Host
	calls []Record
	out   strings.Builder
}

// Run runs the script once: main() of the checkout's form.
func (g Gateway) Run(h Host) Outcome {
	r := &run{g: g, h: h}
	o := Outcome{Mode: g.Mode(h)}
	result, err := r.main(o.Mode)
	o.Calls, o.Output = r.calls, r.out.String()
	var rf *refusal
	var cr *crash
	var pd *pending
	switch {
	case errors.As(err, &pd):
		o.Pending = pd.what
		return o
	case errors.As(err, &cr):
		o.Crash, o.Exit = cr.msg, 1
		return o
	case errors.As(err, &rf):
		// A refusal may quote what the event or GitHub's answer holds (a
		// duplicate key): one line with no control character, so that no
		// part of it is a workflow command of its own. Miles' messages hold
		// none, so they pass byte for byte.
		o.Stdout, o.Exit = "::error::"+strings.ReplaceAll(printable.Line(rf.msg), "##[", `##\[`)+"\n", 1
	case err != nil:
		o.Crash, o.Exit = err.Error(), 1
		return o
	default:
		o.Stdout = pyjson.Dumps(pyjson.DictValue(result), true) + "\n"
		if d, ok := result.Get("decision"); ok {
			o.Decision = d.Str
		}
	}
	if !utf8.ValidString(o.Stdout) {
		// print() encodes stdout as UTF-8, strictly: a lone surrogate stops it.
		o.Stdout, o.Crash, o.Exit = "", "UnicodeEncodeError: 'utf-8' codec can't encode a surrogate: surrogates not allowed", 1
	}
	return o
}

// env is os.environ[name]: a missing variable stops the script (KeyError).
func (r *run) env(name string) (string, error) {
	v, ok := r.h.Getenv(name)
	if !ok {
		return "", &crash{fmt.Sprintf("KeyError: '%s' (the script reads the environment variable %s; set it as the workflow does)", name, name)}
	}
	return v, nil
}

// loadJSON is load_json(path).
func (r *run) loadJSON(path string, limit int) (pyjson.Value, error) {
	data, err := r.h.ReadFile(path)
	if err == nil && len(data) > limit {
		err = &crash{fmt.Sprintf("%s is %d bytes, more than the %d miles-ci reads", path, len(data), limit)}
	}
	if rf := (*Refused)(nil); errors.As(err, &rf) {
		return pyjson.Value{}, &crash{rf.Msg}
	}
	if cr := (*crash)(nil); errors.As(err, &cr) {
		return pyjson.Value{}, err
	}
	if err != nil {
		return pyjson.Value{}, refuse("cannot read JSON from %s: %s", path, err)
	}
	text, err := pyjson.ReadText(data)
	if err != nil {
		return pyjson.Value{}, refuse("cannot read JSON from %s: %s", path, err)
	}
	v, err := pyjson.Decode(text, pyjson.Strict)
	var hook *pyjson.HookError
	var ce *pyjson.CrashError
	switch {
	case errors.As(err, &hook):
		return pyjson.Value{}, refuse("%s", hook.Msg)
	case errors.As(err, &ce):
		return pyjson.Value{}, &crash{ce.Msg}
	case err != nil:
		return pyjson.Value{}, refuse("cannot read JSON from %s: %s", path, err)
	}
	return v, nil
}

func (r *run) loadPolicy() (*Policy, error) {
	path, err := r.env(EnvPolicyPath)
	if err != nil {
		return nil, err
	}
	raw, err := r.loadJSON(path, MaxPolicySize)
	if err != nil {
		return nil, err
	}
	return r.g.ParsePolicy(raw)
}

// api is GitHubAPI(os.environ["CI_COMMAND_API_TOKEN"]).
func (r *run) api() (*api, error) {
	token, err := r.env(EnvToken)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, refuse("GitHub API token is missing")
	}
	return &api{g: r.g, host: r.h, calls: &r.calls}, nil
}

func (r *run) main(mode string) (*pyjson.Object, error) {
	path, err := r.env(EnvEventPath)
	if err != nil {
		return nil, err
	}
	raw, err := r.loadJSON(path, MaxEventSize)
	if err != nil {
		return nil, err
	}
	switch mode {
	case ModeAcknowledge:
		a, err := r.api()
		if err != nil {
			return nil, err
		}
		return r.acknowledge(raw, a)
	case ModeReply:
		a, err := r.api()
		if err != nil {
			return nil, err
		}
		url, _ := r.h.Getenv(EnvRunURL)
		_, set := r.h.Getenv(EnvRunURL)
		return r.reply(raw, a, url, set)
	case ModePreflight:
		ev, err := r.g.ParseEvent(raw)
		if err != nil {
			return nil, err
		}
		if ev.Request == nil {
			if err := r.writeRouting("none", "none"); err != nil {
				return nil, err
			}
			return pyjson.NewObject("actor_id", pyjson.BigValue(ev.ActorID), "decision", pyjson.StrValue("IGNORE_UNRECOGNIZED_COMMAND"),
				"pull_number", pyjson.BigValue(ev.PullNumber)), nil
		}
	}
	p, err := r.loadPolicy()
	if err != nil {
		return nil, err
	}
	a, err := r.api()
	if err != nil {
		return nil, err
	}
	if mode == ModePreflight {
		ev, req, err := r.resolve(raw, p)
		if err != nil {
			return nil, err
		}
		if err := a.requireAccess(ev, req); err != nil {
			return nil, err
		}
		auth := pyjson.NewObject("actor_id", pyjson.BigValue(ev.ActorID), "pull_number", pyjson.BigValue(ev.PullNumber),
			req.cmd.auditKey, pyjson.StrValue(auditValue(ev.Request)))
		if err := r.writeRouting(req.cmd.capability, req.cmd.reaction); err != nil {
			return nil, err
		}
		return auth, nil
	}
	result, err := r.process(raw, p, a)
	if err != nil {
		return nil, err
	}
	if url, ok := result.Get("workflow_run_url"); ok && r.g.RunDetails {
		if !r.g.validRunURL(url) {
			return nil, refuse("workflow run URL is invalid")
		}
		if err := r.writeOutput("workflow_run_url=" + url.Str + "\n"); err != nil {
			return nil, err
		}
	}
	return result, nil
}

// auditValue is the preflight's value of the command: the label, the
// command itself, or the test file.
func auditValue(req *Request) string {
	switch req.cmd.policyKey {
	case clearLabels.policyKey:
		return "/" + clearCommand
	case rerunFailed.policyKey:
		return "/" + rerunCommand
	}
	return req.Value
}

// writeRouting is the preflight's routing outputs: capability, and in the
// run-details form success_reaction.
func (r *run) writeRouting(capability, reaction string) error {
	text := "capability=" + capability + "\n"
	if r.g.RunDetails {
		text += "success_reaction=" + reaction + "\n"
	}
	return r.writeOutput(text)
}

func (r *run) writeOutput(text string) error {
	path, _ := r.h.Getenv(EnvOutput)
	if path == "" {
		return nil
	}
	if err := r.h.AppendOutput(path, text); err != nil {
		return refuse("cannot write GITHUB_OUTPUT: %s", err)
	}
	r.out.WriteString(text)
	return nil
}

// resolved is resolve_policy's answer: the command's policy.
type resolved struct {
	cmd         command
	permissions map[string]bool
	userIDs     []*big.Int
}

// resolve is resolve_policy.
func (r *run) resolve(raw pyjson.Value, p *Policy) (*Event, *resolved, error) {
	ev, err := r.g.ParseEvent(raw)
	if err != nil {
		return nil, nil, err
	}
	if ev.Request == nil {
		return nil, nil, refuse("comment does not contain a recognized command")
	}
	cmd := ev.Request.cmd
	cp := p.commands[cmd.policyKey]
	gr := p.groups[cp.group]
	res := &resolved{cmd: cmd, permissions: gr.permissions}
	if cmd.labels {
		res.userIDs = gr.userIDs
		if !cp.labels[ev.Request.Value] {
			return nil, nil, refuse("requested label is not exposed by policy")
		}
	}
	return ev, res, nil
}

// requireAccess is require_access: a listed user id, else the repository
// permission GitHub gives the author.
func (a *api) requireAccess(ev *Event, res *resolved) error {
	for _, id := range res.userIDs {
		if id.Cmp(ev.ActorID) == 0 {
			return nil
		}
	}
	perm, err := a.getPermission(ev.ActorLogin)
	if err != nil {
		return err
	}
	if perm.Kind != pyjson.Dict {
		return refuse("GitHub API returned an invalid repository permission")
	}
	user, _ := perm.Dict.Get("user")
	var uid pyjson.Value
	if user.Kind == pyjson.Dict {
		uid, _ = user.Dict.Get("id")
	}
	if !uid.PositiveInt() {
		return refuse("GitHub API returned an invalid repository permission identity")
	}
	if uid.Int.Cmp(ev.ActorID) != 0 {
		return refuse("repository permission identity does not match the comment author")
	}
	pv, _ := perm.Dict.Get("permission")
	if pv.Kind != pyjson.Str {
		return refuse("GitHub API returned an invalid repository permission")
	}
	if !res.permissions[pv.Str] {
		return refuse("comment author is not authorized for the requested operation")
	}
	return nil
}

// acknowledge is acknowledge_event: the +1 reaction on the comment.
func (r *run) acknowledge(raw pyjson.Value, a *api) (*pyjson.Object, error) {
	ev, err := r.g.ParseEvent(raw)
	if err != nil {
		return nil, err
	}
	if ev.Request == nil {
		return nil, refuse("comment does not contain a recognized command")
	}
	reaction := ev.Request.cmd.reaction
	if reaction == "none" {
		return nil, refuse("command does not define a success reaction")
	}
	id, err := ev.commentID()
	if err != nil {
		return nil, err
	}
	if err := a.addCommentReaction(id, reaction); err != nil {
		return nil, err
	}
	return pyjson.NewObject("actor_id", pyjson.BigValue(ev.ActorID), "decision", pyjson.StrValue("ALLOW_SUCCESS_REACTION_CONFIRMED"),
		"pull_number", pyjson.BigValue(ev.PullNumber), "reaction", pyjson.StrValue(reaction)), nil
}

// reply is reply_event: a comment linking the dispatched run.
func (r *run) reply(raw pyjson.Value, a *api, url string, set bool) (*pyjson.Object, error) {
	ev, err := r.g.ParseEvent(raw)
	if err != nil {
		return nil, err
	}
	if ev.Request == nil || ev.Request.cmd.policyKey != runTestFile.policyKey {
		return nil, refuse("command does not define a workflow reply")
	}
	uv := pyjson.NoneValue()
	if set {
		uv = pyjson.StrValue(url)
	}
	if !r.g.validRunURL(uv) {
		return nil, refuse("workflow run URL is invalid")
	}
	body := "Started `/" + runFileCommand + " " + ev.Request.Value + "`.\n\n[View workflow run](" + url + ")"
	if err := a.createIssueComment(ev.PullNumber, body); err != nil {
		return nil, err
	}
	return pyjson.NewObject("actor_id", pyjson.BigValue(ev.ActorID), "decision", pyjson.StrValue("ALLOW_WORKFLOW_REPLY_CONFIRMED"),
		"pull_number", pyjson.BigValue(ev.PullNumber), "workflow_run_url", pyjson.StrValue(url)), nil
}

// livePull is _validate_live_pull's answer.
type livePull struct {
	labels    map[string]bool
	headSHA   string
	headRepo  *big.Int
	headOwner string
	headRef   string
}

func (p livePull) sameHead(q livePull) bool {
	return p.headSHA == q.headSHA && p.headRepo.Cmp(q.headRepo) == 0 && p.headOwner == q.headOwner && p.headRef == q.headRef
}

func dictGet(v pyjson.Value, key string) pyjson.Value {
	if v.Kind != pyjson.Dict {
		return pyjson.Value{}
	}
	x, _ := v.Dict.Get(key)
	return x
}

// validateLivePull is _validate_live_pull.
func (g Gateway) validateLivePull(pull pyjson.Value, number *big.Int) (livePull, error) {
	if pull.Kind != pyjson.Dict || !dictGet(pull, "number").EqualInt(number) {
		return livePull{}, refuse("GitHub API returned the wrong pull request")
	}
	if !dictGet(pull, "state").IsStr("open") {
		return livePull{}, refuse("pull request is not open")
	}
	baseRepo := dictGet(dictGet(pull, "base"), "repo")
	if baseRepo.Kind != pyjson.Dict {
		return livePull{}, refuse("pull request base repository is missing")
	}
	if !dictGet(baseRepo, "id").EqualInt(g.RepositoryID) || !dictGet(baseRepo, "full_name").IsStr(g.Repository) {
		return livePull{}, refuse("pull request base repository does not match radixark/miles")
	}
	head := dictGet(pull, "head")
	headRepo := dictGet(head, "repo")
	if headRepo.Kind != pyjson.Dict {
		return livePull{}, refuse("pull request head repository is missing")
	}
	id := dictGet(headRepo, "id")
	if !id.PositiveInt() {
		return livePull{}, refuse("pull request head repository ID must be a positive integer")
	}
	owner := dictGet(dictGet(headRepo, "owner"), "login")
	if owner.Kind != pyjson.Str || owner.Str == "" {
		return livePull{}, refuse("pull request head repository owner is missing")
	}
	ref := dictGet(head, "ref")
	if ref.Kind != pyjson.Str || ref.Str == "" {
		return livePull{}, refuse("pull request head ref is missing")
	}
	labels := dictGet(pull, "labels")
	if labels.Kind != pyjson.List {
		return livePull{}, refuse("pull request labels are invalid")
	}
	for _, l := range labels.List {
		if l.Kind != pyjson.Dict {
			return livePull{}, refuse("pull request labels are invalid")
		}
	}
	names := map[string]bool{}
	for _, l := range labels.List {
		n := dictGet(l, "name")
		if n.Kind != pyjson.Str {
			return livePull{}, refuse("pull request label name is invalid")
		}
		names[n.Str] = true
	}
	sha := dictGet(head, "sha")
	if sha.Kind != pyjson.Str || !shaRe.MatchString(sha.Str) {
		return livePull{}, refuse("pull request head SHA is invalid")
	}
	return livePull{labels: names, headSHA: sha.Str, headRepo: id.Int, headOwner: owner.Str, headRef: ref.Str}, nil
}

// process is process_event: the command itself.
func (r *run) process(raw pyjson.Value, p *Policy, a *api) (*pyjson.Object, error) {
	ev, res, err := r.resolve(raw, p)
	if err != nil {
		return nil, err
	}
	pull, err := a.getPull(ev.PullNumber)
	if err != nil {
		return nil, err
	}
	live, err := r.g.validateLivePull(pull, ev.PullNumber)
	if err != nil {
		return nil, err
	}
	body := ""
	if r.g.RunFile {
		switch b := dictGet(pull, "body"); b.Kind {
		case pyjson.Null:
		case pyjson.Str:
			body = b.Str
		default:
			return nil, refuse("pull request body is invalid")
		}
	}
	switch res.cmd.policyKey {
	case addLabel.policyKey:
		return r.addLabel(a, ev, res, live)
	case clearLabels.policyKey:
		return r.clearLabels(a, ev, res, live)
	case rerunFailed.policyKey:
		return r.rerunFailed(a, ev, res, live)
	}
	return r.runTestFile(a, ev, res, live, body)
}

func (r *run) addLabel(a *api, ev *Event, res *resolved, live livePull) (*pyjson.Object, error) {
	if err := a.requireAccess(ev, res); err != nil {
		return nil, err
	}
	label := ev.Request.Value
	decision := "ALLOW_ALREADY_PRESENT"
	if !live.labels[label] {
		result, sent, err := a.addLabel(ev.PullNumber, label)
		if err != nil {
			return nil, err
		}
		if sent {
			if result.Kind != pyjson.List {
				return nil, refuse("GitHub API did not confirm the requested label")
			}
			found := false
			for _, item := range result.List {
				if item.Kind != pyjson.Dict {
					continue
				}
				name := dictGet(item, "name")
				if !name.Hashable() {
					return nil, &crash{"TypeError: unhashable type: '" + map[pyjson.Kind]string{pyjson.List: "list", pyjson.Dict: "dict"}[name.Kind] + "'"}
				}
				found = found || name.IsStr(label)
			}
			if !found {
				return nil, refuse("GitHub API did not confirm the requested label")
			}
		}
		decision = "ALLOW_ADDED"
	}
	return pyjson.NewObject("actor_id", pyjson.BigValue(ev.ActorID), "decision", pyjson.StrValue(decision),
		"label", pyjson.StrValue(label), "pull_number", pyjson.BigValue(ev.PullNumber)), nil
}

// controlLabel is _is_ci_control_label.
func controlLabel(label string) bool {
	return strings.HasPrefix(label, "run-ci") || label == "nightly" || label == "bypass-fastfail"
}

func (r *run) clearLabels(a *api, ev *Event, res *resolved, live livePull) (*pyjson.Object, error) {
	if err := a.requireAccess(ev, res); err != nil {
		return nil, err
	}
	var remove []string
	for l := range live.labels {
		if controlLabel(l) {
			remove = append(remove, l)
		}
	}
	sort.Strings(remove)
	remaining := live.labels
	for _, label := range remove {
		result, sent, err := a.removeLabel(ev.PullNumber, label)
		var rf *refusal
		if errors.As(err, &rf) {
			return nil, refuse("could not remove CI label %s: %s", label, rf.msg)
		}
		if err != nil {
			return nil, err
		}
		if !sent {
			next := map[string]bool{}
			for l := range remaining {
				if l != label {
					next[l] = true
				}
			}
			remaining = next
			continue
		}
		ok := result.Kind == pyjson.List
		next := map[string]bool{}
		for _, item := range result.List {
			name := dictGet(item, "name")
			if item.Kind != pyjson.Dict || name.Kind != pyjson.Str {
				ok = false
				break
			}
			next[name.Str] = true
		}
		if !ok || next[label] {
			return nil, refuse("GitHub API did not confirm removal of %s", label)
		}
		remaining = next
	}
	for l := range remaining {
		if controlLabel(l) {
			return nil, refuse("GitHub API did not confirm that all CI labels were removed")
		}
	}
	decision := "ALLOW_ALREADY_CLEAR"
	if len(remove) > 0 {
		decision = "ALLOW_CLEARED"
	}
	labels := make([]pyjson.Value, len(remove))
	for i, l := range remove {
		labels[i] = pyjson.StrValue(l)
	}
	return pyjson.NewObject("actor_id", pyjson.BigValue(ev.ActorID), "decision", pyjson.StrValue(decision),
		"labels", pyjson.ListValue(labels...), "pull_number", pyjson.BigValue(ev.PullNumber)), nil
}

// rerunWorkflows are RERUN_WORKFLOWS: the PR workflows /rerun-failed-ci
// re-runs, with the path a run of each names.
var rerunWorkflows = [][2]string{
	{"pre-commit.yml", ".github/workflows/pre-commit.yml"},
	{"pr-test.yml", ".github/workflows/pr-test.yml"},
	{"pr-test-rocm.yml", ".github/workflows/pr-test-rocm.yml"},
}

// latestFailedRun is _latest_failed_run: the id of the newest run of the
// PR's head, when it failed (nil otherwise).
func latestFailedRun(runs []pyjson.Value, path string, number *big.Int, live livePull, fork bool) (*big.Int, error) {
	type assoc struct {
		number, id *big.Int
		run        pyjson.Value
	}
	var found []assoc
	var seen []*big.Int
	for _, run := range runs {
		if run.Kind != pyjson.Dict {
			return nil, refuse("GitHub API returned an invalid workflow run")
		}
		id := dictGet(run, "id")
		if !id.PositiveInt() {
			return nil, refuse("workflow run ID must be a positive integer")
		}
		for _, s := range seen {
			if s.Cmp(id.Int) == 0 {
				return nil, refuse("GitHub API returned a duplicate workflow run")
			}
		}
		seen = append(seen, id.Int)
		num := dictGet(run, "run_number")
		if !num.PositiveInt() {
			return nil, refuse("workflow run number must be a positive integer")
		}
		if !dictGet(run, "path").IsStr(path) {
			return nil, refuse("GitHub API returned a workflow run from an unexpected path")
		}
		if !dictGet(run, "event").IsStr("pull_request") || !dictGet(run, "head_sha").IsStr(live.headSHA) {
			return nil, refuse("GitHub API returned a workflow run from an unexpected event or SHA")
		}
		if !dictGet(run, "head_branch").IsStr(live.headRef) {
			return nil, refuse("GitHub API returned a workflow run from an unexpected head ref")
		}
		hr := dictGet(run, "head_repository")
		if hr.Kind != pyjson.Dict || !dictGet(hr, "id").EqualInt(live.headRepo) {
			return nil, refuse("GitHub API returned a workflow run from an unexpected repository")
		}
		prs := dictGet(run, "pull_requests")
		if prs.Kind != pyjson.List {
			return nil, refuse("GitHub API returned invalid workflow-run pull requests")
		}
		ours := false
		for _, pr := range prs.List {
			if pr.Kind != pyjson.Dict {
				return nil, refuse("GitHub API returned an invalid workflow-run pull request")
			}
			n := dictGet(pr, "number")
			if !n.PositiveInt() {
				return nil, refuse("workflow-run pull number must be a positive integer")
			}
			ours = ours || n.Int.Cmp(number) == 0
		}
		if ours || len(prs.List) == 0 && fork {
			found = append(found, assoc{num.Int, id.Int, run})
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	best := found[0]
	for _, f := range found[1:] {
		if c := f.number.Cmp(best.number); c > 0 || c == 0 && f.id.Cmp(best.id) > 0 {
			best = f
		}
	}
	if dictGet(best.run, "status").IsStr("completed") && dictGet(best.run, "conclusion").IsStr("failure") {
		return best.id, nil
	}
	return nil, nil
}

// requireUniqueHeadPull is _require_unique_head_pull: a fork's head names
// exactly this pull request.
func (r *run) requireUniqueHeadPull(a *api, number *big.Int, live livePull) error {
	pulls, err := a.listPullsForHead(live.headOwner, live.headRef)
	if err != nil {
		return err
	}
	if len(pulls) != 1 {
		return refuse("fork head does not identify exactly one pull request")
	}
	pull := pulls[0]
	if pull.Kind != pyjson.Dict || !dictGet(pull, "number").EqualInt(number) || !dictGet(pull, "state").IsStr("open") {
		return refuse("fork head identifies an unexpected pull request")
	}
	base := dictGet(dictGet(pull, "base"), "repo")
	head := dictGet(pull, "head")
	hr := dictGet(head, "repo")
	owner := dictGet(hr, "owner")
	if base.Kind != pyjson.Dict || !dictGet(base, "id").EqualInt(r.g.RepositoryID) || !dictGet(base, "full_name").IsStr(r.g.Repository) ||
		hr.Kind != pyjson.Dict || !dictGet(hr, "id").EqualInt(live.headRepo) || owner.Kind != pyjson.Dict ||
		!dictGet(owner, "login").IsStr(live.headOwner) || !dictGet(head, "ref").IsStr(live.headRef) || !dictGet(head, "sha").IsStr(live.headSHA) {
		return refuse("fork head pull-request identity does not match the live pull request")
	}
	return nil
}

func (r *run) rerunFailed(a *api, ev *Event, res *resolved, live livePull) (*pyjson.Object, error) {
	fork := live.headRepo.Cmp(r.g.RepositoryID) != 0
	if fork {
		if err := r.requireUniqueHeadPull(a, ev.PullNumber, live); err != nil {
			return nil, err
		}
	}
	type candidate struct {
		id         *big.Int
		file, path string
	}
	var cands []candidate
	for _, w := range rerunWorkflows {
		runs, err := a.listWorkflowRuns(w[0], live.headSHA)
		if err != nil {
			return nil, err
		}
		id, err := latestFailedRun(runs, w[1], ev.PullNumber, live, fork)
		if err != nil {
			return nil, err
		}
		if id != nil {
			cands = append(cands, candidate{id, w[0], w[1]})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if c := cands[i].id.Cmp(cands[j].id); c != 0 {
			return c < 0
		}
		if cands[i].file != cands[j].file {
			return cands[i].file < cands[j].file
		}
		return cands[i].path < cands[j].path
	})
	if len(cands) == 0 {
		if err := a.requireAccess(ev, res); err != nil {
			return nil, err
		}
	}
	for _, c := range cands {
		pull, err := a.getPull(ev.PullNumber)
		if err != nil {
			return nil, err
		}
		now, err := r.g.validateLivePull(pull, ev.PullNumber)
		if err != nil {
			return nil, err
		}
		if !now.sameHead(live) {
			return nil, refuse("pull request head changed before rerun")
		}
		if fork {
			if err := r.requireUniqueHeadPull(a, ev.PullNumber, live); err != nil {
				return nil, err
			}
		}
		runs, err := a.listWorkflowRuns(c.file, live.headSHA)
		if err != nil {
			return nil, err
		}
		id, err := latestFailedRun(runs, c.path, ev.PullNumber, live, fork)
		if err != nil {
			return nil, err
		}
		if id == nil || id.Cmp(c.id) != 0 {
			return nil, refuse("latest workflow-run state changed before rerun")
		}
		if err := a.requireAccess(ev, res); err != nil {
			return nil, err
		}
		if err := a.rerunFailedJobs(c.id); err != nil {
			var rf *refusal
			if errors.As(err, &rf) {
				return nil, refuse("could not rerun failed jobs for workflow run %s: %s", c.id, rf.msg)
			}
			return nil, err
		}
	}
	decision := "ALLOW_NO_FAILED_RUNS"
	if len(cands) > 0 {
		decision = "ALLOW_RERUN_REQUESTED"
	}
	ids := make([]pyjson.Value, len(cands))
	for i, c := range cands {
		ids[i] = pyjson.BigValue(c.id)
	}
	return pyjson.NewObject("actor_id", pyjson.BigValue(ev.ActorID), "decision", pyjson.StrValue(decision),
		"head_sha", pyjson.StrValue(live.headSHA), "pull_number", pyjson.BigValue(ev.PullNumber),
		"workflow_run_ids", pyjson.ListValue(ids...)), nil
}

// prBodyPins are PR_BODY_PINS: the dispatch input, the line's key and the
// value's shape.
var prBodyPins = []struct{ input, key, shape string }{
	{"ci_image_tag", "ci-image-tag:", `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`},
	{"ci_megatron_pr", "ci-megatron-pr:", `#[0-9]+|[A-Za-z0-9_][A-Za-z0-9_./-]*`},
	{"ci_sglang_pr", "ci-sglang-pr:", `#[0-9]+|[A-Za-z0-9_][A-Za-z0-9_./-]*`},
}

// pinShapes are the pins' shapes, each a full match.
var pinShapes = map[string]*regexp.Regexp{
	prBodyPins[0].shape: fullMatch(prBodyPins[0].shape),
	prBodyPins[1].shape: fullMatch(prBodyPins[1].shape),
}

// pinValue is re.search(r"^KEY\s+(\S+)", body, re.MULTILINE).group(1) on a
// str: the first line start (the text's, or after a "\n") where the key is
// followed by whitespace (Unicode, newlines included) and then non-whitespace.
func pinValue(body, key string) (string, bool) {
	rs := pyjson.Runes(body)
	kr := []rune(key)
	for start := 0; start <= len(rs); start++ {
		if start > 0 && rs[start-1] != '\n' {
			continue
		}
		i := start
		if len(rs)-i < len(kr) || string(rs[i:i+len(kr)]) != key {
			continue
		}
		i += len(kr)
		j := i
		for j < len(rs) && pyjson.IsSpace(rs[j]) {
			j++
		}
		if j == i {
			continue
		}
		k := j
		for k < len(rs) && !pyjson.IsSpace(rs[k]) {
			k++
		}
		if k == j {
			continue
		}
		var b strings.Builder
		for _, c := range rs[j:k] {
			pyjson.AppendRune(&b, c)
		}
		return b.String(), true
	}
	return "", false
}

func (r *run) runTestFile(a *api, ev *Event, res *resolved, live livePull, body string) (*pyjson.Object, error) {
	if live.headRepo.Cmp(r.g.RepositoryID) != 0 {
		return nil, refuse("/rerun-test supports only same-repository pull requests")
	}
	if err := a.requireAccess(ev, res); err != nil {
		return nil, err
	}
	inputs := pyjson.NewObject("pull_number", pyjson.StrValue(ev.PullNumber.String()), "head_sha", pyjson.StrValue(live.headSHA),
		"test_file", pyjson.StrValue(ev.Request.Value))
	for _, pin := range prBodyPins {
		v, ok := pinValue(body, pin.key)
		if !ok {
			continue
		}
		if !pinShapes[pin.shape].MatchString(v) {
			return nil, refuse("PR body pin %s has an unsupported value: %s", strings.ReplaceAll(pin.input, "_", "-"), pyjson.StrRepr(v))
		}
		inputs = pyjson.NewObject(append(pairsOf(inputs), pin.input, pyjson.StrValue(v))...)
	}
	url, err := a.createWorkflowDispatch("run-ci-file.yml", "main", inputs)
	if err != nil {
		return nil, err
	}
	out := []any{"actor_id", pyjson.BigValue(ev.ActorID), "decision", pyjson.StrValue("ALLOW_FILE_RUN_DISPATCHED"),
		"head_sha", pyjson.StrValue(live.headSHA), "pull_number", pyjson.BigValue(ev.PullNumber), "test_file", pyjson.StrValue(ev.Request.Value)}
	if r.g.RunDetails {
		out = append(out, "workflow_run_url", pyjson.StrValue(url))
	}
	return pyjson.NewObject(out...), nil
}

func pairsOf(o *pyjson.Object) []any {
	var out []any
	for i, k := range o.Keys {
		out = append(out, k, o.Vals[i])
	}
	return out
}

// Refused is a Host's refusal to read a file the script would read without
// bound or block on (a FIFO, a device, a file over the bound): the run stops
// as the script stops on a traceback.
type Refused struct{ Msg string }

func (r *Refused) Error() string { return r.Msg }
