package commenttest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/github/githubtest"
)

// The generated scenarios' world: Miles' repository, its people and pull
// requests (made-up ids and names).
const (
	repoID    = 1072725553
	repoName  = "radixark/miles"
	forkID    = 770012345
	headSHA   = "3f4c9a1e7b2d5c8f0a6e4d2b1c9f8e7d6a5b4c3d"
	otherSHA  = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"
	prSame    = 4201
	prFork    = 4202
	prClosed  = 4203
	commentID = 880011
)

type person struct {
	login      string
	id         int
	permission string // "" = the permission request fails (404)
	answerID   int    // the id the permission answer names (0 = id)
}

var (
	maint    = person{"maint-a", 9101, "write", 0}
	boss     = person{"boss", 9102, "admin", 0}
	reader   = person{"reader", 9103, "read", 0}
	stranger = person{"stranger", 9104, "none", 0}
	listed   = person{"listed-one", 9105, "none", 0}
	keeper   = person{"keeper", 9106, "maintain", 0}
	imposter = person{"imposter", 9107, "write", 9999}
	ghost    = person{"ghost-user", 9108, "", 0}
)

type pull struct {
	number        int
	state         string
	fork          bool
	labels        []string
	body          any // string or nil
	sha, ref, own string
}

func (p pull) headRepoID() int {
	if p.fork {
		return forkID
	}
	return repoID
}

func obj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (p pull) json() map[string]any {
	labels := []any{}
	for i, l := range p.labels {
		labels = append(labels, obj("id", 7000+i, "name", l))
	}
	owner := p.own
	if owner == "" {
		owner = "radixark"
		if p.fork {
			owner = "forker"
		}
	}
	sha, ref := p.sha, p.ref
	if sha == "" {
		sha = headSHA
	}
	if ref == "" {
		ref = "feat/gateway"
		if p.fork {
			ref = "patch-1"
		}
	}
	return obj("number", p.number, "state", p.state, "body", p.body, "labels", labels,
		"head", obj("sha", sha, "ref", ref, "repo", obj("id", p.headRepoID(), "full_name", owner+"/miles", "owner", obj("login", owner))),
		"base", obj("ref", "main", "repo", obj("id", repoID, "full_name", repoName)))
}

func event(body any, who person, number int) map[string]any {
	user := obj("login", who.login, "id", who.id, "type", "User")
	return obj("action", "created",
		"issue", obj("number", number, "pull_request", obj("url", "https://api.github.com/repos/radixark/miles/pulls/"+fmt.Sprint(number))),
		"comment", obj("id", commentID, "body", body, "user", user),
		"repository", obj("id", repoID, "full_name", repoName),
		"sender", obj("login", who.login, "id", who.id, "type", "User"))
}

// policies: the one every generated scenario uses, and the wide one that
// also exposes run-on-* labels and lists a user id.
func policy(wide bool, userIDs ...int) map[string]any {
	labels := []any{"bypass-fastfail", "run-ci-long", "run-ci-megatron", "run-ci-short"}
	if wide {
		labels = append(labels, "run-on-blackwell")
	}
	ids := []any{}
	for _, id := range userIDs {
		ids = append(ids, id)
	}
	return obj("version", 2,
		"groups", obj("add_label_access", obj("repository_permissions", []any{"write", "admin"}, "user_ids", ids),
			"repo_write_access", obj("repository_permissions", []any{"write", "admin"})),
		"commands", obj("add_label", obj("group", "add_label_access", "allowed_labels", labels),
			"clear_labels", obj("group", "repo_write_access"), "rerun_failed_ci", obj("group", "repo_write_access"),
			"run_test_file", obj("group", "repo_write_access")))
}

func route(method, path string, replies ...githubtest.Reply) githubtest.Route {
	return githubtest.Route{Method: method, Path: "/repos/" + repoName + path, Replies: replies}
}

func ok(status int, body any) githubtest.Reply {
	if s, isText := body.(string); isText {
		return githubtest.Reply{Status: status, Body: s}
	}
	return githubtest.Reply{Status: status, Body: js(body)}
}

func permRoutes(people ...person) []githubtest.Route {
	var out []githubtest.Route
	for _, p := range people {
		if p.permission == "" {
			continue
		}
		id := p.id
		if p.answerID != 0 {
			id = p.answerID
		}
		out = append(out, route("GET", "/collaborators/"+p.login+"/permission",
			ok(200, obj("permission", p.permission, "user", obj("login", p.login, "id", id)))))
	}
	return out
}

var everyone = []person{maint, boss, reader, stranger, listed, keeper, imposter, ghost}

// modes are the workflow's runs of the script, each a scenario.
var modes = []struct {
	name string
	env  map[string]string
}{
	{"preflight", map[string]string{"CI_COMMAND_PREFLIGHT": "true"}},
	{"command", map[string]string{}},
	{"acknowledge", map[string]string{"CI_COMMAND_ACKNOWLEDGE": "true"}},
	{"reply", map[string]string{"CI_COMMAND_REPLY": "true", "CI_COMMAND_WORKFLOW_RUN_URL": "https://github.com/radixark/miles/actions/runs/55501"}},
}

func baseEnv() map[string]string {
	return map[string]string{"GITHUB_EVENT_PATH": EventFile, "CI_COMMAND_POLICY_PATH": PolicyFile, "GITHUB_OUTPUT": OutputFile,
		"CI_COMMAND_API_TOKEN": "ghs_generatedtoken0123456789"}
}

type gen struct{ out []Scenario }

// add adds the situation in every mode.
func (g *gen) add(name string, ev, pol any, routes []githubtest.Route) {
	for _, m := range modes {
		g.addEnv(name+" ["+m.name+"]", ev, pol, routes, m.env)
	}
}

func (g *gen) addEnv(name string, ev, pol any, routes []githubtest.Route, env map[string]string) {
	e := baseEnv()
	for k, v := range env {
		if v == "<unset>" {
			delete(e, k)
		} else {
			e[k] = v
		}
	}
	text := func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		return js(v)
	}
	g.out = append(g.out, Scenario{Name: name, Env: e, Event: text(ev), Policy: text(pol), Routes: routes})
}

// Generate is the differential tests' scenarios: every command, every
// access path, events and policies Miles' script refuses, open, closed,
// fork and same-repository pull requests, runs that move between checks,
// in each mode.
func Generate() []Scenario {
	g := &gen{}
	g.labels()
	g.clear()
	g.rerun()
	g.runFile()
	g.events()
	g.policies()
	g.environment()
	return g.out
}

func pulls() []pull {
	return []pull{
		{number: prSame, state: "open", labels: []string{"documentation"}, body: "Adds a thing."},
		{number: prSame, state: "open", labels: []string{"run-ci-short", "documentation"}, body: nil},
		{number: prFork, state: "open", fork: true, labels: []string{}, body: "From a fork."},
		{number: prClosed, state: "closed", labels: []string{}, body: ""},
	}
}

func pullRoutes(p pull) []githubtest.Route {
	return []githubtest.Route{route("GET", fmt.Sprintf("/pulls/%d", p.number), ok(200, p.json()))}
}

func labelsAfter(p pull, add string) []any {
	out := []any{}
	for _, l := range append(append([]string{}, p.labels...), add) {
		out = append(out, obj("name", l))
	}
	return out
}

func (g *gen) labels() {
	bodies := []string{"/run-ci-short", "  /bypass-fastfail\n", "/run-on-blackwell", "/run-ci-nope", "/run-ci-long"}
	people := []person{maint, boss, reader, stranger, listed, keeper, imposter, ghost}
	for _, body := range bodies {
		for _, who := range people {
			for pi, p := range pulls() {
				for _, wide := range []bool{false, true} {
					if wide && (pi != 0 || who != listed && who != maint) {
						continue
					}
					label := strings.TrimPrefix(strings.TrimSpace(body), "/")
					routes := append(pullRoutes(p), permRoutes(everyone...)...)
					routes = append(routes, route("POST", fmt.Sprintf("/issues/%d/labels", p.number), ok(200, labelsAfter(p, label))))
					pol := policy(wide)
					if wide {
						pol = policy(true, listed.id)
					}
					g.add(fmt.Sprintf("label %q by %s on PR %d (%s, wide=%v)", body, who.login, p.number, p.state, wide), event(body, who, p.number), pol, routes)
				}
			}
		}
	}
	// GitHub's answer to the label: not confirmed, an error, not JSON.
	p := pulls()[0]
	for i, reply := range []githubtest.Reply{ok(200, []any{obj("name", "other")}), ok(500, obj("message", "boom")), {Status: 200, Body: "not json"},
		ok(200, obj("name", "run-ci-short")), ok(201, labelsAfter(p, "run-ci-short")), ok(200, []any{obj("name", []any{"x"})}), ok(200, []any{"run-ci-short", obj("name", "run-ci-short")})} {
		routes := append(pullRoutes(p), permRoutes(maint)...)
		routes = append(routes, route("POST", fmt.Sprintf("/issues/%d/labels", p.number), reply))
		g.add(fmt.Sprintf("label answer %d", i), event("/run-ci-short", maint, p.number), policy(false), routes)
	}
}

func (g *gen) clear() {
	labelSets := [][]string{{}, {"documentation"}, {"run-ci-short", "nightly", "documentation", "bypass-fastfail", "run-ci"}, {"run-cix", "Run-CI-short"}}
	for _, who := range []person{maint, reader, listed, ghost} {
		for _, set := range labelSets {
			for _, fork := range []bool{false, true} {
				p := pull{number: prSame, state: "open", labels: set, body: "x", fork: fork}
				routes := append(pullRoutes(p), permRoutes(everyone...)...)
				remaining := append([]string{}, set...)
				var sorted []string
				for _, l := range set {
					if strings.HasPrefix(l, "run-ci") || l == "nightly" || l == "bypass-fastfail" {
						sorted = append(sorted, l)
					}
				}
				sortStrings(sorted)
				for _, l := range sorted {
					var next []string
					for _, r := range remaining {
						if r != l {
							next = append(next, r)
						}
					}
					remaining = next
					names := []any{}
					for _, r := range remaining {
						names = append(names, obj("name", r))
					}
					routes = append(routes, route("DELETE", fmt.Sprintf("/issues/%d/labels/%s", p.number, l), ok(200, names)))
				}
				g.add(fmt.Sprintf("clear %v by %s (fork=%v)", set, who.login, fork), event("/clear-labels", who, p.number), policy(false, listed.id), routes)
			}
		}
	}
	// Removal answers that do not confirm it, and a label with a slash.
	p := pull{number: prSame, state: "open", labels: []string{"run-ci-a/b", "nightly"}, body: "x"}
	for i, reply := range []githubtest.Reply{ok(200, []any{obj("name", "nightly")}), ok(404, obj("message", "Label does not exist")), ok(200, []any{obj("name", 5)}), ok(200, obj("name", "x")), ok(200, []any{obj("name", "run-ci-new")})} {
		routes := append(pullRoutes(p), permRoutes(maint)...)
		routes = append(routes, route("DELETE", fmt.Sprintf("/issues/%d/labels/nightly", p.number), ok(200, []any{obj("name", "run-ci-a/b")})),
			route("DELETE", fmt.Sprintf("/issues/%d/labels/run-ci-a%%2Fb", p.number), reply))
		g.add(fmt.Sprintf("clear answer %d", i), event("/clear-labels", maint, p.number), policy(false), routes)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

var rerunFiles = [][2]string{{"pre-commit.yml", ".github/workflows/pre-commit.yml"}, {"pr-test.yml", ".github/workflows/pr-test.yml"}, {"pr-test-rocm.yml", ".github/workflows/pr-test-rocm.yml"}}

type wfRun struct {
	id, number         int
	status, conclusion string
	prs                []int
	sha, branch        string
	repo               int
	path               string
}

func (r wfRun) json(p pull, file string) map[string]any {
	prs := []any{}
	for _, n := range r.prs {
		prs = append(prs, obj("number", n))
	}
	sha, branch, repo, path := r.sha, r.branch, r.repo, r.path
	if sha == "" {
		sha = headSHA
	}
	if branch == "" {
		branch = p.json()["head"].(map[string]any)["ref"].(string)
	}
	if repo == 0 {
		repo = p.headRepoID()
	}
	if path == "" {
		path = ".github/workflows/" + file
	}
	return obj("id", r.id, "run_number", r.number, "status", r.status, "conclusion", r.conclusion, "event", "pull_request",
		"head_sha", sha, "head_branch", branch, "path", path, "pull_requests", prs, "head_repository", obj("id", repo))
}

func runsPath(file string, page int) string {
	return fmt.Sprintf("/actions/workflows/%s/runs?event=pull_request&head_sha=%s&page=%d&per_page=100", file, headSHA, page)
}

func (g *gen) rerun() {
	type setup struct {
		name string
		runs map[string][][]wfRun // per file: the listing at each check
		// pulls are the answers to the PR's second and later reads.
		moved bool
		post  githubtest.Reply
	}
	failed := func(id, number int, prs ...int) wfRun {
		return wfRun{id: id, number: number, status: "completed", conclusion: "failure", prs: prs}
	}
	setups := []setup{
		{name: "no runs", runs: map[string][][]wfRun{}},
		{name: "one failed", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6001, 12, prSame, prFork)}}}},
		{name: "failed then newer success", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6001, 12, prSame, prFork), {id: 6002, number: 13, status: "completed", conclusion: "success", prs: []int{prSame, prFork}}}}}},
		{name: "failed then newer in progress", runs: map[string][][]wfRun{"pre-commit.yml": {{failed(6003, 2, prSame, prFork), {id: 6004, number: 3, status: "in_progress", prs: []int{prSame, prFork}}}}}},
		{name: "three failed", runs: map[string][][]wfRun{"pre-commit.yml": {{failed(6105, 4, prSame, prFork)}}, "pr-test.yml": {{failed(6101, 9, prSame, prFork)}}, "pr-test-rocm.yml": {{failed(6103, 7, prSame, prFork), failed(6100, 6, prSame, prFork)}}}},
		{name: "another PR's run", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6201, 5, 9999)}}}},
		{name: "a run without PRs", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6301, 5)}}}},
		{name: "run moved between checks", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6401, 5, prSame, prFork)}, {failed(6401, 5, prSame, prFork), failed(6402, 6, prSame, prFork)}}}},
		{name: "run fixed between checks", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6401, 5, prSame, prFork)}, {failed(6401, 5, prSame, prFork), {id: 6403, number: 6, status: "queued", prs: []int{prSame, prFork}}}}}},
		{name: "head moved between checks", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6501, 5, prSame, prFork)}}}, moved: true},
		{name: "rerun refused", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6601, 5, prSame, prFork)}}}, post: ok(403, obj("message", "no"))},
		{name: "rerun answers a body", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6602, 5, prSame, prFork)}}}, post: ok(201, obj("ok", true))},
		{name: "rerun answers 200", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6603, 5, prSame, prFork)}}}, post: ok(200, "")},
		{name: "duplicate run", runs: map[string][][]wfRun{"pr-test.yml": {{failed(6701, 5, prSame, prFork), failed(6701, 6, prSame, prFork)}}}},
		{name: "run of another path", runs: map[string][][]wfRun{"pr-test.yml": {{{id: 6801, number: 5, status: "completed", conclusion: "failure", prs: []int{prSame, prFork}, path: ".github/workflows/other.yml"}}}}},
		{name: "run of another SHA", runs: map[string][][]wfRun{"pr-test.yml": {{{id: 6802, number: 5, status: "completed", conclusion: "failure", prs: []int{prSame, prFork}, sha: otherSHA}}}}},
		{name: "run of another repository", runs: map[string][][]wfRun{"pr-test.yml": {{{id: 6803, number: 5, status: "completed", conclusion: "failure", prs: []int{prSame, prFork}, repo: 31337}}}}},
	}
	for _, fork := range []bool{false, true} {
		for _, s := range setups {
			for _, who := range []person{maint, reader, listed} {
				if who == listed && s.name != "one failed" {
					continue
				}
				for _, heads := range []int{1, 2, 0} {
					if !fork && heads != 1 {
						continue
					}
					p := pull{number: prSame, state: "open", fork: fork, labels: []string{}, body: "x"}
					if fork {
						p.number = prFork
					}
					moved := p
					moved.sha = otherSHA
					pr := route("GET", fmt.Sprintf("/pulls/%d", p.number), ok(200, p.json()))
					if s.moved {
						pr.Replies = append(pr.Replies, ok(200, moved.json()))
					}
					routes := append([]githubtest.Route{pr}, permRoutes(everyone...)...)
					for _, f := range rerunFiles {
						listings := s.runs[f[0]]
						if len(listings) == 0 {
							listings = [][]wfRun{{}}
						}
						var replies []githubtest.Reply
						for _, l := range listings {
							runs := []any{}
							for _, r := range l {
								if fork && len(r.prs) > 0 && s.name == "a run without PRs" {
									r.prs = nil
								}
								runs = append(runs, r.json(p, f[0]))
							}
							replies = append(replies, ok(200, obj("total_count", len(runs), "workflow_runs", runs)))
						}
						routes = append(routes, route("GET", runsPath(f[0], 1), replies...))
						for _, l := range listings {
							for _, r := range l {
								post := s.post
								if post.Status == 0 {
									post = githubtest.Reply{Status: 201}
								}
								routes = append(routes, route("POST", fmt.Sprintf("/actions/runs/%d/rerun-failed-jobs", r.id), post))
							}
						}
					}
					var list []any
					for i := 0; i < heads; i++ {
						list = append(list, p.json())
					}
					if list == nil {
						list = []any{}
					}
					head := p.json()["head"].(map[string]any)
					routes = append(routes, route("GET", fmt.Sprintf("/pulls?head=%s%%3A%s&page=1&per_page=100&state=all", head["repo"].(map[string]any)["owner"].(map[string]any)["login"], strings.ReplaceAll(head["ref"].(string), "/", "%2F")), ok(200, list)))
					g.add(fmt.Sprintf("rerun %s by %s (fork=%v, head PRs %d)", s.name, who.login, fork, heads), event("/rerun-failed-ci", who, p.number), policy(false, listed.id), routes)
				}
			}
		}
	}
	// Paged listings (the script reads pages until it holds total_count
	// runs), and listings that lie about their count.
	p := pull{number: prSame, state: "open", labels: []string{}, body: "x"}
	listing := func(total any, from, n int) githubtest.Reply {
		runs := []any{}
		for i := from; i < from+n; i++ {
			r := wfRun{id: 7000 + i, number: 1 + i, status: "completed", conclusion: "success", prs: []int{prSame}}
			if i == 2 {
				r.conclusion = "failure"
			}
			runs = append(runs, r.json(p, "pr-test.yml"))
		}
		return ok(200, obj("total_count", total, "workflow_runs", runs))
	}
	tenPages := []githubtest.Reply{}
	for i := 0; i < 10; i++ {
		tenPages = append(tenPages, listing(1000, 10+i, 1))
	}
	for i, pages := range [][]githubtest.Reply{
		{listing(3, 0, 2), listing(3, 2, 1)},
		{listing(3, 0, 2), listing(4, 2, 1)},
		{listing(3, 0, 2), listing(3, 2, 0)},
		{listing(3, 0, 2), listing(3, 2, 2)},
		{listing(1001, 0, 2)},
		{listing(true, 0, 0)},
		{listing(-1, 0, 0)},
		{ok(200, obj("total_count", 0, "workflow_runs", obj()))},
		{ok(200, []any{})},
		tenPages,
	} {
		routes := append(pullRoutes(p), permRoutes(maint)...)
		for _, f := range rerunFiles {
			if f[0] != "pr-test.yml" {
				routes = append(routes, route("GET", runsPath(f[0], 1), ok(200, obj("total_count", 0, "workflow_runs", []any{}))))
			}
		}
		for n, reply := range pages {
			routes = append(routes, route("GET", runsPath("pr-test.yml", n+1), reply))
		}
		routes = append(routes, route("POST", "/actions/runs/7002/rerun-failed-jobs", githubtest.Reply{Status: 201}))
		g.add(fmt.Sprintf("rerun listing %d", i), event("/rerun-failed-ci", maint, p.number), policy(false), routes)
	}
}

func (g *gen) runFile() {
	bodies := []string{"/rerun-test tests/e2e/short/test_gateway.py", "/rerun-test   tests/fast/test_unit.py  "}
	pins := []any{nil, "Fixes a bug.\n\nci-image-tag: dev-2026.08\nci-megatron-pr: #123\nci-sglang-pr: feature/branch-1\n",
		"ci-image-tag: bad/tag\n", "ci-sglang-pr:\u00a0#77\nci-megatron-pr:\n\n  main\nci-image-tag:x\nci-image-tag: later\n", "ci-megatron-pr: ,bad", "text\r\nci-image-tag: t1\r\n"}
	dispatches := []githubtest.Reply{{Status: 204}, ok(200, obj("workflow_run_id", 55501, "run_url", APIRoot+"/repos/radixark/miles/actions/runs/55501", "html_url", "https://github.com/radixark/miles/actions/runs/55501")),
		ok(200, obj("workflow_run_id", 55501, "run_url", "https://api.example.com/repos/radixark/miles/actions/runs/55501", "html_url", "https://github.com/radixark/miles/actions/runs/55501")),
		ok(200, obj("workflow_run_id", 55502, "run_url", APIRoot+"/repos/radixark/miles/actions/runs/55502", "html_url", "https://github.com/radixark/miles/actions/runs/55501"))}
	for bi, body := range bodies {
		for pi, pin := range pins {
			for _, fork := range []bool{false, true} {
				for _, who := range []person{maint, reader} {
					for di, d := range dispatches {
						if (bi > 0 || fork || who != maint) && (pi > 1 || di > 1) {
							continue
						}
						p := pull{number: prSame, state: "open", fork: fork, labels: []string{}, body: pin}
						routes := append(pullRoutes(p), permRoutes(everyone...)...)
						routes = append(routes, route("POST", "/actions/workflows/run-ci-file.yml/dispatches", d),
							route("POST", fmt.Sprintf("/issues/comments/%d/reactions", commentID), ok(201, obj("id", 1, "content", "+1"))),
							route("POST", fmt.Sprintf("/issues/%d/comments", p.number), ok(201, obj("id", 2, "body", "Started `/rerun-test tests/e2e/short/test_gateway.py`.\n\n[View workflow run](https://github.com/radixark/miles/actions/runs/55501)"))))
						g.add(fmt.Sprintf("rerun-test %d pins %d fork=%v by %s dispatch %d", bi, pi, fork, who.login, di), event(body, who, p.number), policy(false, listed.id), routes)
					}
				}
			}
		}
	}
	// Paths the command refuses, and text that only mentions a command.
	for _, body := range []string{"/rerun-test tests/../etc/test_x.py", "/rerun-test tests/e2e/x.py", "/rerun-test /tmp/test_x.py", "/rerun-test tests/e2e/test_a.py tests/e2e/test_b.py",
		"/rerun-test\ttests/e2e/test_a.py", "/rerun-testtests/e2e/test_a.py", "/rerun-test tests/other/test_a.py", "/rerun-test tests/e2e/.hidden/test_a.py", "/rerun-test tests/e2e/test_a.py?",
		"please /run-ci-short", "/run-ci", "/run-cix", "hello", "", "LGTM", "/run-ci-short /run-ci-long", "/bypass-fastfail!", "/clear-labels now", "see /rerun-failed-ci", "/Run-ci-short",
		"\u3000/run-ci-short\u3000", "\x1c/clear-labels\x1f", "/run-on-blackwell now", "/rerun-failed-ci\u200b"} {
		p := pull{number: prSame, state: "open", labels: []string{}, body: "x"}
		routes := append(pullRoutes(p), permRoutes(maint)...)
		routes = append(routes, route("POST", "/actions/workflows/run-ci-file.yml/dispatches", githubtest.Reply{Status: 204}),
			route("POST", fmt.Sprintf("/issues/%d/labels", p.number), ok(200, []any{obj("name", "run-ci-short")})))
		g.add(fmt.Sprintf("body %q", body), event(body, maint, p.number), policy(false), routes)
	}
	// Reactions and replies GitHub does not confirm; reply URLs.
	p := pull{number: prSame, state: "open", labels: []string{}, body: "x"}
	for i, reply := range []githubtest.Reply{ok(200, obj("content", "+1")), ok(201, obj("content", "-1")), ok(204, ""), ok(422, obj("message", "x")), {Status: 201, Body: "[]"}} {
		routes := []githubtest.Route{route("POST", fmt.Sprintf("/issues/comments/%d/reactions", commentID), reply), route("POST", fmt.Sprintf("/issues/%d/comments", p.number), reply)}
		g.addEnv(fmt.Sprintf("reaction answer %d", i), event("/rerun-test tests/e2e/test_a.py", maint, p.number), policy(false), routes, modes[2].env)
		g.addEnv(fmt.Sprintf("reply answer %d", i), event("/rerun-test tests/e2e/test_a.py", maint, p.number), policy(false), routes, modes[3].env)
	}
	for _, url := range []string{"<unset>", "", "https://github.com/radixark/miles/actions/runs/0", "https://github.com/other/repo/actions/runs/5", "https://github.com/radixark/miles/actions/runs/12x", "http://github.com/radixark/miles/actions/runs/5"} {
		routes := []githubtest.Route{route("POST", fmt.Sprintf("/issues/%d/comments", p.number), ok(201, obj("body", "x")))}
		g.addEnv(fmt.Sprintf("reply url %q", url), event("/rerun-test tests/e2e/test_a.py", maint, p.number), policy(false), routes,
			map[string]string{"CI_COMMAND_REPLY": "true", "CI_COMMAND_WORKFLOW_RUN_URL": url})
	}
}

func mutate(ev map[string]any, path string, v any) map[string]any {
	out := map[string]any{}
	_ = json.Unmarshal([]byte(js(ev)), &out)
	keys := strings.Split(path, ".")
	m := out
	for _, k := range keys[:len(keys)-1] {
		m = m[k].(map[string]any)
	}
	if v == "<delete>" {
		delete(m, keys[len(keys)-1])
	} else {
		m[keys[len(keys)-1]] = v
	}
	return out
}

func (g *gen) events() {
	p := pull{number: prSame, state: "open", labels: []string{}, body: "x"}
	routes := append(pullRoutes(p), permRoutes(everyone...)...)
	routes = append(routes, route("POST", fmt.Sprintf("/issues/%d/labels", p.number), ok(200, []any{obj("name", "run-ci-short")})),
		route("POST", "/actions/workflows/run-ci-file.yml/dispatches", githubtest.Reply{Status: 204}),
		route("POST", fmt.Sprintf("/issues/comments/%d/reactions", commentID), ok(201, obj("content", "+1"))))
	for _, body := range []string{"/run-ci-short", "/rerun-test tests/e2e/test_a.py"} {
		base := event(body, maint, p.number)
		for _, m := range []struct {
			path string
			v    any
		}{
			{"action", "edited"}, {"action", "deleted"}, {"action", "<delete>"},
			{"repository.id", 1}, {"repository.id", float64(repoID)}, {"repository.id", "1072725553"}, {"repository.full_name", "radixark/Miles"}, {"repository", "<delete>"}, {"repository", []any{}},
			{"issue.pull_request", "<delete>"}, {"issue.pull_request", nil}, {"issue.number", 0}, {"issue.number", "4201"}, {"issue.number", 4201.0}, {"issue.number", true}, {"issue.number", 99999},
			{"comment.user.type", "Bot"}, {"comment.user.type", "Organization"}, {"comment.user.id", "9101"}, {"comment.user.id", -4}, {"comment.user.login", ""}, {"comment.user.login", nil},
			{"comment.user", "<delete>"}, {"comment.user", "maint-a"}, {"comment", "<delete>"}, {"comment.body", nil}, {"comment.body", 5}, {"comment.id", "<delete>"}, {"comment.id", 0}, {"comment.id", "880011"},
			{"sender.id", 9102}, {"sender.id", 9101.0}, {"sender", "<delete>"}, {"sender.id", "9101"},
			{"comment.user.login", "maint a/é"},
		} {
			g.add(fmt.Sprintf("event %s=%v (%s)", m.path, m.v, body), mutate(base, m.path, m.v), policy(false), routes)
		}
	}
	// Event files Python reads its own way.
	for _, text := range []string{"", "{", "[]", "null", `{"action": NaN}`, `{"action": "created", "action": "created"}`, "\ufeff{}", "{\"a\": \"\\ud800\"}", "\xff\xfe", `{"a": 1e400}`,
		strings.Repeat("[", 993) + strings.Repeat("]", 993), strings.Repeat("[", 994) + strings.Repeat("]", 994), `{"x": "` + "\x01" + `"}`, "{\n  \"action\": \"created\",\n  \"bad\"\n}", "{\r\n\"x\": tru}",
		`{"a": {"b": 1, "b": 2}, "c": NaN}`, `{"a": {"b": "\ud83d\ude00", "b": 2}}`, `{"` + "\\udc80" + `": 1, "` + "\\udc80" + `": 2}`} {
		g.add(fmt.Sprintf("event text %q", text), text, policy(false), routes)
	}
}

func (g *gen) policies() {
	p := pull{number: prSame, state: "open", labels: []string{}, body: "x"}
	routes := append(pullRoutes(p), permRoutes(everyone...)...)
	routes = append(routes, route("POST", fmt.Sprintf("/issues/%d/labels", p.number), ok(200, []any{obj("name", "run-ci-short")})))
	base := policy(false)
	for _, m := range []struct {
		path string
		v    any
	}{
		{"version", 3}, {"version", 2.0}, {"version", true}, {"version", "2"}, {"extra", 1}, {"groups.other", obj()}, {"groups.add_label_access", "<delete>"},
		{"groups.add_label_access.user_ids", "<delete>"}, {"groups.add_label_access.user_ids", []any{9105, 9105}}, {"groups.add_label_access.user_ids", []any{0}}, {"groups.add_label_access.user_ids", []any{true}},
		{"groups.add_label_access.user_ids", obj()}, {"groups.add_label_access.user_ids", []any{9101}},
		{"groups.repo_write_access.user_ids", []any{}}, {"groups.repo_write_access.repository_permissions", []any{}}, {"groups.repo_write_access.repository_permissions", []any{"write", "write"}},
		{"groups.repo_write_access.repository_permissions", []any{"maintain"}}, {"groups.repo_write_access.repository_permissions", "write"}, {"groups.add_label_access.repository_permissions", []any{"admin"}},
		{"commands.run_test_file", "<delete>"}, {"commands.extra", obj("group", "repo_write_access")}, {"commands.add_label.allowed_labels", []any{}}, {"commands.add_label.allowed_labels", []any{"run-ci-short", "run-ci-short"}},
		{"commands.add_label.allowed_labels", []any{"run-ci-short", "nightly"}}, {"commands.add_label.allowed_labels", []any{1.5}}, {"commands.add_label.allowed_labels", []any{nil, []any{"x"}}},
		{"commands.add_label.allowed_labels", []any{"run-on-hopper", "run-ci-short"}}, {"commands.add_label.allowed_labels", []any{obj("a", "é'\"")}}, {"commands.add_label.allowed_labels", []any{"run-ci-\u00e9"}},
		{"commands.clear_labels.group", "add_label_access"}, {"commands.clear_labels.group", "nope"}, {"commands.clear_labels.group", 1}, {"commands.clear_labels.extra", 1},
		{"commands.add_label.group", "repo_write_access"},
	} {
		pol := mutate(base, m.path, m.v)
		if m.path == "commands.clear_labels.group" && m.v == "add_label_access" {
			pol = mutate(pol, "groups.add_label_access.user_ids", []any{9105})
		}
		for _, body := range []string{"/run-ci-short", "/clear-labels"} {
			for _, mode := range modes[:2] {
				g.addEnv(fmt.Sprintf("policy %s=%v %s [%s]", m.path, m.v, body, mode.name), event(body, maint, p.number), pol, routes, mode.env)
			}
		}
	}
	for _, text := range []string{"", "{}", `{"version": 2, "version": 2}`, `{"version": NaN}`, "[1,", "\xc3("} {
		for _, mode := range modes[:2] {
			g.addEnv(fmt.Sprintf("policy text %q [%s]", text, mode.name), event("/run-ci-short", maint, p.number), text, routes, mode.env)
		}
	}
}

func (g *gen) environment() {
	p := pull{number: prSame, state: "open", labels: []string{}, body: "x"}
	routes := append(pullRoutes(p), permRoutes(everyone...)...)
	routes = append(routes, route("POST", fmt.Sprintf("/issues/%d/labels", p.number), ok(200, []any{obj("name", "run-ci-short")})))
	ev := event("/run-ci-short", maint, p.number)
	for _, env := range []map[string]string{
		{"CI_COMMAND_API_TOKEN": ""}, {"CI_COMMAND_API_TOKEN": "<unset>"}, {"CI_COMMAND_POLICY_PATH": "<unset>"}, {"CI_COMMAND_POLICY_PATH": "missing.json"}, {"CI_COMMAND_POLICY_PATH": "."},
		{"CI_COMMAND_POLICY_PATH": ""}, {"GITHUB_EVENT_PATH": "<unset>"}, {"GITHUB_EVENT_PATH": "nowhere/event.json"}, {"GITHUB_EVENT_PATH": "./" + EventFile}, {"GITHUB_OUTPUT": "<unset>"},
		{"GITHUB_OUTPUT": ""}, {"GITHUB_OUTPUT": "no-such-dir/out"}, {"CI_COMMAND_PREFLIGHT": "True"}, {"CI_COMMAND_PREFLIGHT": "1"}, {"CI_COMMAND_ACKNOWLEDGE": "true", "CI_COMMAND_PREFLIGHT": "true"},
		{"CI_COMMAND_REPLY": "true", "CI_COMMAND_PREFLIGHT": "true"}, {"CI_COMMAND_REPLY": "true", "CI_COMMAND_ACKNOWLEDGE": "true", "CI_COMMAND_WORKFLOW_RUN_URL": "https://github.com/radixark/miles/actions/runs/1"},
	} {
		for _, mode := range modes[:2] {
			e := map[string]string{}
			for k, v := range mode.env {
				e[k] = v
			}
			for k, v := range env {
				e[k] = v
			}
			g.addEnv(fmt.Sprintf("env %v [%s]", env, mode.name), ev, policy(false), routes, e)
		}
	}
}
