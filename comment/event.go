package comment

import (
	"math/big"
	"regexp"
	"strings"

	"github.com/radixark/miles-ci/pyjson"
)

// MaxEventSize bounds the event payload (an issue_comment payload is a few
// KiB plus the comment, which GitHub caps at 65536 characters).
const MaxEventSize = 8 << 20

// The commands (rules §15) and the expressions that recognise them.
const (
	clearCommand   = "clear-labels"
	rerunCommand   = "rerun-failed-ci"
	runFileCommand = "rerun-test"
	testFileShape  = `tests/(?:e2e|fast|fast-gpu|ci)(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)*/test_[A-Za-z0-9_][A-Za-z0-9_.-]*\.py`
)

var (
	commandRe = regexp.MustCompile(`\A/(run-ci-[A-Za-z0-9][A-Za-z0-9_.-]*|bypass-fastfail)\z`)
	runFileRe = regexp.MustCompile(`\A/` + runFileCommand + ` +(` + testFileShape + `)\z`)
	shapes    = map[string]*regexp.Regexp{labelsNarrow: fullMatch(labelsNarrow), labelsWide: fullMatch(labelsWide)}
	shaRe     = regexp.MustCompile(`\A[0-9a-f]{40}\z`)
)

// Request is one parsed command: its kind and its value (the label or the
// test file).
type Request struct {
	cmd   command
	Value string
}

// Kind is the command's policy key (add_label, clear_labels,
// rerun_failed_ci, run_test_file).
func (r Request) Kind() string { return r.cmd.policyKey }

// parseCommand is parse_command: nil for a comment that is no command.
func (g Gateway) parseCommand(body pyjson.Value) (*Request, error) {
	if body.Kind != pyjson.Str {
		return nil, refuse("comment body must be a string")
	}
	text := pyjson.Strip(body.Str)
	switch {
	case text == "/"+clearCommand:
		return &Request{cmd: clearLabels}, nil
	case text == "/"+rerunCommand:
		return &Request{cmd: rerunFailed}, nil
	}
	if m := commandRe.FindStringSubmatch(text); m != nil {
		return &Request{cmd: addLabel, Value: m[1]}, nil
	}
	if g.RunFile {
		if m := runFileRe.FindStringSubmatch(text); m != nil {
			return &Request{cmd: runTestFile, Value: m[1]}, nil
		}
	}
	for _, marker := range g.Markers {
		if strings.Contains(text, marker) {
			return nil, refuse("%s", g.NotExact)
		}
	}
	return nil, nil
}

// Event is what parse_event reads of an issue_comment payload.
type Event struct {
	PullNumber *big.Int
	ActorID    *big.Int
	ActorLogin string
	Request    *Request
	raw        pyjson.Value
}

// ParseEvent is parse_event: the event's checks, in the script's order.
func (g Gateway) ParseEvent(ev pyjson.Value) (*Event, error) {
	get := func(v pyjson.Value, key string) pyjson.Value {
		if v.Kind != pyjson.Dict {
			return pyjson.Value{}
		}
		x, _ := v.Dict.Get(key)
		return x
	}
	if ev.Kind != pyjson.Dict || !get(ev, "action").IsStr("created") {
		return nil, refuse("event must be issue_comment.created")
	}
	repo := get(ev, "repository")
	if repo.Kind != pyjson.Dict {
		return nil, refuse("event repository is missing")
	}
	if !get(repo, "id").EqualInt(g.RepositoryID) || !get(repo, "full_name").IsStr(g.Repository) {
		return nil, refuse("event repository does not match radixark/miles")
	}
	issue := get(ev, "issue")
	if issue.Kind != pyjson.Dict || get(issue, "pull_request").Kind != pyjson.Dict {
		return nil, refuse("comment is not attached to a pull request")
	}
	number := get(issue, "number")
	if !number.PositiveInt() {
		return nil, refuse("pull request number must be a positive integer")
	}
	cm := get(ev, "comment")
	user := get(cm, "user")
	if cm.Kind != pyjson.Dict || user.Kind != pyjson.Dict {
		return nil, refuse("comment author is missing")
	}
	if !get(user, "type").IsStr("User") {
		return nil, refuse("comment author must be a human GitHub user")
	}
	id := get(user, "id")
	if !id.PositiveInt() {
		return nil, refuse("comment author ID must be a positive integer")
	}
	login := get(user, "login")
	if login.Kind != pyjson.Str || login.Str == "" {
		return nil, refuse("comment author login is missing")
	}
	sender := get(ev, "sender")
	if sender.Kind != pyjson.Dict || !get(sender, "id").EqualInt(id.Int) {
		return nil, refuse("event sender does not match the comment author")
	}
	req, err := g.parseCommand(get(cm, "body"))
	if err != nil {
		return nil, err
	}
	return &Event{PullNumber: number.Int, ActorID: id.Int, ActorLogin: login.Str, Request: req, raw: ev}, nil
}

// commentID is the event's comment.id (acknowledge_event).
func (e *Event) commentID() (*big.Int, error) {
	cm, _ := e.raw.Dict.Get("comment")
	id, _ := cm.Dict.Get("id")
	if !id.PositiveInt() {
		return nil, refuse("comment ID must be a positive integer")
	}
	return id.Int, nil
}
