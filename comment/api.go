package comment

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/pyjson"
)

// Call is one request the gateway makes of GitHub's REST API.
type Call struct {
	Method string `json:"method"`
	// Path is the path and query from the API root, as the script writes it
	// (its escapes included), e.g. /repos/radixark/miles/pulls/7.
	Path string `json:"path"`
	// Body is the JSON body, byte for byte ("" for none).
	Body string `json:"body,omitempty"`
}

// Changes says whether the call changes something on GitHub (a dry run
// does not send it).
func (c Call) Changes() bool { return c.Method != "GET" }

func (c Call) String() string {
	if c.Body == "" {
		return c.Method + " " + c.Path
	}
	return c.Method + " " + c.Path + " " + c.Body
}

// Answer is GitHub's answer to a call.
type Answer struct {
	// Status is the HTTP status (0 when the request failed).
	Status int
	Body   []byte
	// Failed says why the request got no answer (the network); TimedOut
	// that it took longer than the script waits.
	Failed   string
	TimedOut bool
	// NotSent marks a change a dry run did not make: the gateway takes it
	// as confirmed where the confirmation holds nothing GitHub alone knows.
	NotSent bool
}

// Record is one call as made: whether it was sent and its status.
type Record struct {
	Call
	Sent   bool `json:"sent"`
	Status int  `json:"status,omitempty"`
}

// api is the script's GitHubAPI over a Host.
type api struct {
	g     Gateway
	host  Host
	calls *[]Record
}

func (a *api) repo() string { return "/repos/" + a.g.Repository }

// request is GitHubAPI._request: the status checks, then the body as JSON
// (expectJSON) or empty. sent is false for a change a dry run did not make.
func (a *api) request(method, path string, payload *pyjson.Object, expected []int, expectJSON bool) (pyjson.Value, bool, error) {
	c := Call{Method: method, Path: path}
	if payload != nil {
		c.Body = pyjson.Dumps(pyjson.DictValue(payload), false)
	}
	ans := a.host.Call(c)
	*a.calls = append(*a.calls, Record{Call: c, Sent: !ans.NotSent, Status: ans.Status})
	switch {
	case ans.NotSent:
		return pyjson.Value{}, false, nil
	case ans.TimedOut:
		return pyjson.Value{}, true, refuse("GitHub API request timed out")
	case ans.Failed != "":
		return pyjson.Value{}, true, refuse("GitHub API request failed: %s", ans.Failed)
	case ans.Status < 200 || ans.Status > 299:
		return pyjson.Value{}, true, refuse("GitHub API returned HTTP %d", ans.Status)
	}
	if expected != nil && !containsInt(expected, ans.Status) {
		want := make([]string, len(expected))
		for i, s := range expected {
			want[i] = strconv.Itoa(s)
		}
		return pyjson.Value{}, true, refuse("GitHub API returned HTTP %d; expected %s", ans.Status, strings.Join(want, " or "))
	}
	if !expectJSON {
		if strings.TrimLeft(string(ans.Body), " \t\n\r\v\f") != "" {
			return pyjson.Value{}, true, refuse("GitHub API returned an unexpected response body")
		}
		return pyjson.NoneValue(), true, nil
	}
	v, err := pyjson.DecodeBytes(ans.Body, pyjson.Loose)
	if ce, ok := err.(*pyjson.CrashError); ok {
		return pyjson.Value{}, true, &crash{ce.Msg}
	}
	if err != nil {
		return pyjson.Value{}, true, refuse("GitHub API returned invalid JSON")
	}
	return v, true, nil
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// quote is urllib.parse.quote(s, safe=""); a lone surrogate cannot be
// encoded and stops the script.
func quote(s string, plus bool) (string, error) {
	if pyjson.HasSurrogate(s) {
		return "", &crash{"UnicodeEncodeError: 'utf-8' codec can't encode a surrogate: surrogates not allowed"}
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-', c == '~':
			b.WriteByte(c)
		case c == ' ' && plus:
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String(), nil
}

// PathQuote is urllib.parse.quote(s, safe=""), as the script escapes a
// login or a label in a path.
func PathQuote(s string) (string, error) { return quote(s, false) }

// query is urllib.parse.urlencode of the pairs, in order.
func query(pairs ...string) (string, error) {
	parts := make([]string, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		v, err := quote(pairs[i+1], true)
		if err != nil {
			return "", err
		}
		parts = append(parts, pairs[i]+"="+v)
	}
	return strings.Join(parts, "&"), nil
}

func (a *api) getPull(n *big.Int) (pyjson.Value, error) {
	v, _, err := a.request("GET", a.repo()+"/pulls/"+n.String(), nil, nil, true)
	return v, err
}

func (a *api) getPermission(login string) (pyjson.Value, error) {
	q, err := quote(login, false)
	if err != nil {
		return pyjson.Value{}, err
	}
	v, _, err := a.request("GET", a.repo()+"/collaborators/"+q+"/permission", nil, nil, true)
	return v, err
}

func (a *api) addLabel(n *big.Int, label string) (pyjson.Value, bool, error) {
	return a.request("POST", a.repo()+"/issues/"+n.String()+"/labels",
		pyjson.NewObject("labels", pyjson.ListValue(pyjson.StrValue(label))), nil, true)
}

func (a *api) removeLabel(n *big.Int, label string) (pyjson.Value, bool, error) {
	q, err := quote(label, false)
	if err != nil {
		return pyjson.Value{}, true, err
	}
	return a.request("DELETE", a.repo()+"/issues/"+n.String()+"/labels/"+q, nil, nil, true)
}

// maxPages is the script's bound on a paged listing (10 pages of 100).
const maxPages = 10

func (a *api) listWorkflowRuns(workflow, sha string) ([]pyjson.Value, error) {
	file, err := quote(workflow, false)
	if err != nil {
		return nil, err
	}
	var runs []pyjson.Value
	total := -1
	for page := 1; page <= maxPages; page++ {
		q, err := query("event", "pull_request", "head_sha", sha, "page", strconv.Itoa(page), "per_page", "100")
		if err != nil {
			return nil, err
		}
		result, _, err := a.request("GET", a.repo()+"/actions/workflows/"+file+"/runs?"+q, nil, nil, true)
		if err != nil {
			return nil, err
		}
		if result.Kind != pyjson.Dict {
			return nil, refuse("GitHub API returned an invalid workflow-run page")
		}
		pt, _ := result.Dict.Get("total_count")
		pr, _ := result.Dict.Get("workflow_runs")
		if pt.Kind != pyjson.Int || pt.Int.Sign() < 0 || pt.Int.Cmp(big.NewInt(1000)) > 0 {
			return nil, refuse("GitHub API returned an invalid workflow-run count")
		}
		if pr.Kind != pyjson.List {
			return nil, refuse("GitHub API returned invalid workflow runs")
		}
		n := int(pt.Int.Int64())
		if total < 0 {
			total = n
		} else if n != total {
			return nil, refuse("workflow-run count changed during pagination")
		}
		runs = append(runs, pr.List...)
		if len(runs) >= total {
			if len(runs) != total {
				return nil, refuse("GitHub API returned too many workflow runs")
			}
			return runs, nil
		}
		if len(pr.List) == 0 {
			return nil, refuse("GitHub API returned an incomplete workflow-run listing")
		}
	}
	return nil, refuse("workflow-run listing exceeded the 1000-run API limit")
}

func (a *api) listPullsForHead(owner, ref string) ([]pyjson.Value, error) {
	var pulls []pyjson.Value
	for page := 1; page <= maxPages; page++ {
		q, err := query("head", owner+":"+ref, "page", strconv.Itoa(page), "per_page", "100", "state", "all")
		if err != nil {
			return nil, err
		}
		result, _, err := a.request("GET", a.repo()+"/pulls?"+q, nil, nil, true)
		if err != nil {
			return nil, err
		}
		if result.Kind != pyjson.List {
			return nil, refuse("GitHub API returned an invalid head pull-request page")
		}
		pulls = append(pulls, result.List...)
		if len(result.List) < 100 {
			return pulls, nil
		}
	}
	return nil, refuse("head pull-request listing exceeded the 1000-result limit")
}

func (a *api) rerunFailedJobs(id *big.Int) error {
	_, _, err := a.request("POST", a.repo()+"/actions/runs/"+id.String()+"/rerun-failed-jobs", nil, []int{201}, false)
	return err
}

// pending is a dry run stopped at a change whose answer decides the rest.
type pending struct{ what string }

func (p *pending) Error() string { return p.what }

// createWorkflowDispatch dispatches the file run; the run-details form
// returns the run's link, checked against the API root and the repository.
func (a *api) createWorkflowDispatch(workflow, ref string, inputs *pyjson.Object) (string, error) {
	file, err := quote(workflow, false)
	if err != nil {
		return "", err
	}
	path := a.repo() + "/actions/workflows/" + file + "/dispatches"
	if !a.g.RunDetails {
		_, _, err := a.request("POST", path, pyjson.NewObject("ref", pyjson.StrValue(ref), "inputs", pyjson.DictValue(inputs)), []int{204}, false)
		return "", err
	}
	result, sent, err := a.request("POST", path, pyjson.NewObject("ref", pyjson.StrValue(ref), "inputs", pyjson.DictValue(inputs),
		"return_run_details", pyjson.BoolValue(true)), []int{200}, true)
	if err != nil {
		return "", err
	}
	if !sent {
		return "", &pending{"GitHub's answer to the dispatch names the run it starts; the script then prints ALLOW_FILE_RUN_DISPATCHED with the run's link as workflow_run_url"}
	}
	if result.Kind != pyjson.Dict {
		return "", refuse("GitHub API returned invalid workflow dispatch details")
	}
	id, _ := result.Dict.Get("workflow_run_id")
	if !id.PositiveInt() {
		return "", refuse("workflow run ID must be a positive integer")
	}
	html, _ := result.Dict.Get("html_url")
	if !a.g.validRunURL(html) {
		return "", refuse("workflow run URL is invalid")
	}
	runURL, _ := result.Dict.Get("run_url")
	if !runURL.IsStr(a.host.APIRoot()+a.repo()+"/actions/runs/"+id.Int.String()) ||
		html.Str != "https://github.com/"+a.g.Repository+"/actions/runs/"+id.Int.String() {
		return "", refuse("GitHub API returned mismatched workflow dispatch details")
	}
	return html.Str, nil
}

// validRunURL is WORKFLOW_RUN_URL_PATTERN's full match.
func (g Gateway) validRunURL(v pyjson.Value) bool {
	if v.Kind != pyjson.Str {
		return false
	}
	rest, ok := strings.CutPrefix(v.Str, "https://github.com/"+g.Repository+"/actions/runs/")
	if !ok || rest == "" || rest[0] < '1' || rest[0] > '9' {
		return false
	}
	for i := 1; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return true
}

func (a *api) addCommentReaction(id *big.Int, content string) error {
	result, sent, err := a.request("POST", a.repo()+"/issues/comments/"+id.String()+"/reactions",
		pyjson.NewObject("content", pyjson.StrValue(content)), []int{200, 201}, true)
	if err != nil || !sent {
		return err
	}
	if c, _ := result.Dict.Get("content"); result.Kind != pyjson.Dict || !c.IsStr(content) {
		return refuse("GitHub API did not confirm the comment reaction")
	}
	return nil
}

func (a *api) createIssueComment(n *big.Int, body string) error {
	result, sent, err := a.request("POST", a.repo()+"/issues/"+n.String()+"/comments",
		pyjson.NewObject("body", pyjson.StrValue(body)), []int{201}, true)
	if err != nil || !sent {
		return err
	}
	if b, _ := result.Dict.Get("body"); result.Kind != pyjson.Dict || !b.IsStr(body) {
		return refuse("GitHub API did not confirm the workflow reply")
	}
	return nil
}

// PathString is str(pathlib.Path(path)): the path the script opens and
// names in an OSError ("" is ".", "a//b/" is "a/b", "./x" is "x").
func PathString(p string) string {
	if p == "" {
		return "."
	}
	root := ""
	switch {
	case strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///"):
		root = "//"
	case strings.HasPrefix(p, "/"):
		root = "/"
	}
	var parts []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			parts = append(parts, s)
		}
	}
	if out := root + strings.Join(parts, "/"); out != "" {
		return out
	}
	return "."
}
