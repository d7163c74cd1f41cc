package github

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/github/githubtest"
	"github.com/radixark/miles-ci/policy"
)

var fixtures = filepath.Join("..", "testdata", "github")

func newClient(t *testing.T, s *githubtest.Server, o Options) *Client {
	t.Helper()
	o.APIURL = s.URL
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFetchPRPagesToTheEnd(t *testing.T) {
	s := githubtest.Start(fixtures)
	defer s.Close()
	p, err := newClient(t, s, Options{}).FetchPR(context.Background(), "radixark/miles", 2874)
	if err != nil {
		t.Fatal(err)
	}
	// One request for the PR, then 250 files at 100 a page.
	if s.Requests != 4 {
		t.Errorf("wanted 4 requests (PR + 3 pages), got %d", s.Requests)
	}
	if len(p.Files) != 250 || p.ChangedFiles != 250 || p.FilesCapped() {
		t.Errorf("wanted 250 files, not capped; got %d of %d, capped=%t", len(p.Files), p.ChangedFiles, p.FilesCapped())
	}
	if got, want := strings.Join(p.Labels, ","), "run-ci-megatron,documentation"; got != want {
		t.Errorf("labels: wanted %q, got %q", want, got)
	}
	if p.Fork || p.HeadSHA != "5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d" || p.State != "open" || p.Source != "api" {
		t.Errorf("wanted a same-repo open PR at 5f1d0c7e..., got fork=%t head=%q state=%q source=%q", p.Fork, p.HeadSHA, p.State, p.Source)
	}
	if p.MergeSHA != "9c1e5b7a3d2f4e6a8b0c1d3e5f7a9b2c4d6e8f01" || p.BaseRef != "main" {
		t.Errorf("wanted GitHub's merge commit into main, got %q into %q", p.MergeSHA, p.BaseRef)
	}
	if got, want := p.Trigger(), (policy.Trigger{Event: "pull_request", PRLabelsJSON: `["run-ci-megatron","documentation"]`}); got != want {
		t.Errorf("trigger: wanted %+v, got %+v", want, got)
	}
	diff, why := p.NameStatus()
	if why != "" {
		t.Fatal(why)
	}
	entries, err := policy.ParseNameStatus(diff)
	if err != nil {
		t.Fatalf("the rendered diff does not parse: %v", err)
	}
	if len(entries) != 250 {
		t.Fatalf("wanted 250 entries, got %d", len(entries))
	}
	if got, want := fmt.Sprint(entries[1]), "{R100 [tests/e2e/async/test_replay_old.py tests/e2e/async/test_replay.py]}"; got != want {
		t.Errorf("rename: wanted %q, got %q", want, got)
	}
	if d, ok := deps.FirstDirective(p.Body, deps.KeySGLang); !ok || d.Value != "#1234" {
		t.Errorf("wanted the body's ci-sglang-pr: #1234, got %+v", d)
	}
}

func TestFetchPRForkAndNullBody(t *testing.T) {
	s := githubtest.Start(fixtures)
	defer s.Close()
	p, err := newClient(t, s, Options{}).FetchPR(context.Background(), "radixark/miles", 2901)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Fork || p.HeadRepo != "octo-dev/miles" || p.Body != "" || len(p.Labels) != 0 || p.LabelsJSON() != "[]" {
		t.Errorf("wanted a fork PR from octo-dev/miles with no body or labels, got %+v", p)
	}
}

func TestFetchPRBodyOver64KiB(t *testing.T) {
	s := githubtest.Start(fixtures)
	defer s.Close()
	p, err := newClient(t, s, Options{}).FetchPR(context.Background(), "radixark/miles", 2950)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Body) <= 64<<10 {
		t.Fatalf("the fixture's body should be over 64 KiB, is %d bytes", len(p.Body))
	}
	// The directive on the last line is read: nothing cut the body short.
	img, err := deps.ResolveImage(deps.ImageInputs{Backend: policy.CUDA, PRBody: p.Body})
	if err != nil || img.Image != "radixark/miles:dev-202605011200" || img.Line != 5 {
		t.Errorf("wanted radixark/miles:dev-202605011200 from body line 5, got %+v, %v", img, err)
	}
}

func TestFetchPRErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*githubtest.Server)
		opts  Options
		repo  string
		pr    int
		want  string // the error up to go-github's own wording
	}{
		{name: "missing PR", repo: "radixark/miles", pr: 99999,
			want: "reading pull request radixark/miles#99999: not found (404); check --pr and --github-repo; a private repository also needs GITHUB_TOKEN or GH_TOKEN: GET "},
		{name: "missing PR with a token", repo: "radixark/miles", pr: 99999, opts: Options{Token: "t0k"},
			want: "reading pull request radixark/miles#99999: not found (404); check --pr and --github-repo: GET "},
		{name: "rate limit", repo: "radixark/miles", pr: 2874, setup: func(s *githubtest.Server) { s.RateLimited = true },
			want: "reading pull request radixark/miles#2874: GitHub API rate limit exceeded (60 requests an hour, resets at 15:30:00 UTC); set GITHUB_TOKEN or GH_TOKEN to a token (5,000 requests an hour instead of 60), or wait until then: GET "},
		{name: "rate limit with a token", repo: "radixark/miles", pr: 2874, opts: Options{Token: "t0k"}, setup: func(s *githubtest.Server) { s.RateLimited = true },
			want: "reading pull request radixark/miles#2874: GitHub API rate limit exceeded (60 requests an hour, resets at 15:30:00 UTC); the token in GITHUB_TOKEN/GH_TOKEN has used its quota, or wait until then: GET "},
		{name: "timeout", repo: "radixark/miles", pr: 2874, opts: Options{Timeout: 50 * time.Millisecond},
			setup: func(s *githubtest.Server) { s.Stall = 5 * time.Second },
			want:  "reading pull request radixark/miles#2874: no answer from 127.0.0.1:"},
		{name: "response over the bound", repo: "radixark/miles", pr: 2950, opts: Options{MaxResponseSize: 64 << 10},
			want: "reading pull request radixark/miles#2950: the response to /repos/radixark/miles/pulls/2950 is larger than 65536 bytes; this is not an answer GitHub gives, check GITHUB_API_URL"},
		{name: "bad repository", repo: "radixark", pr: 1,
			want: `--github-repo "radixark" is not a repository; give owner/name, e.g. radixark/miles`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := githubtest.Start(fixtures)
			defer s.Close()
			if tt.setup != nil {
				tt.setup(s)
			}
			_, err := newClient(t, s, tt.opts).FetchPR(context.Background(), tt.repo, tt.pr)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("wanted an error starting %q, got %v", tt.want, err)
			}
		})
	}
}

func TestFetchPRTimeoutSaysWhatToDo(t *testing.T) {
	s := githubtest.Start(fixtures)
	defer s.Close()
	s.Stall = 5 * time.Second
	_, err := newClient(t, s, Options{Timeout: 50 * time.Millisecond}).FetchPR(context.Background(), "radixark/miles", 2874)
	want := " within 50ms; check the network (or HTTPS_PROXY), or work offline with --pr-body-file, --pr-labels-json and --changed-files: "
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("wanted an error holding %q, got %v", want, err)
	}
}

func TestTokenTravelsInTheHeaderOnly(t *testing.T) {
	s := githubtest.Start(fixtures)
	defer s.Close()
	if _, err := newClient(t, s, Options{Token: "s3cret"}).GetPR(context.Background(), "radixark/miles", 2901); err != nil {
		t.Fatal(err)
	}
	if got := s.Tokens[0]; got != "Bearer s3cret" {
		t.Errorf("wanted the token as a bearer header, got %q", got)
	}
	if _, err := newClient(t, s, Options{}).GetPR(context.Background(), "radixark/miles", 2901); err != nil {
		t.Fatal(err)
	}
	if got := s.Tokens[1]; got != "" {
		t.Errorf("wanted an anonymous request, got Authorization %q", got)
	}
}

func TestFilesCappedAt3000FailOpen(t *testing.T) {
	s := githubtest.Start(fixtures)
	defer s.Close()
	for i := range 3100 {
		s.Files = append(s.Files, githubtest.File("modified", fmt.Sprintf("docs/page_%04d.md", i), "", 1))
	}
	p, err := newClient(t, s, Options{}).FetchPR(context.Background(), "radixark/miles", 2874)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 3000 || !p.FilesCapped() {
		t.Fatalf("wanted the 3,000 files GitHub lists, capped; got %d, capped=%t", len(p.Files), p.FilesCapped())
	}
	if s.Requests != 31 {
		t.Errorf("wanted 31 requests (PR + 30 pages), got %d", s.Requests)
	}
	diff, why := p.NameStatus()
	want := "radixark/miles#2874 changes 3000 files and GitHub lists at most 3000, so the diff is incomplete"
	if diff != nil || why != want {
		t.Errorf("wanted no diff and %q, got %d bytes and %q", want, len(diff), why)
	}
	// The PR object counts more files than the list holds: capped too.
	p.Files, p.ChangedFiles = p.Files[:10], 3100
	if !p.FilesCapped() {
		t.Error("wanted a list shorter than changed_files to count as capped")
	}
}

func TestLookupDependencyPRs(t *testing.T) {
	s := githubtest.Start(fixtures)
	defer s.Close()
	d := deps.Decision{
		SGLang:   deps.Ref{Ref: "#1234", Fetch: "refs/pull/1234/head", Source: deps.FromPRBody, Line: 7},
		Megatron: deps.Ref{Ref: "#82", Fetch: "refs/pull/82/head", Source: deps.FromPRBody, Line: 8},
	}
	got := LookupDependencyPRs(context.Background(), newClient(t, s, Options{}), d, "")
	want := []string{
		`sgl-project/sglang#1234: "[miles] expose the weight-update barrier" (open, head c0ffee123456)`,
		`radixark/Megatron-LM#82: "Fix the dist-ckpt loader for Qwen3" (merged, head badc0de45678)`,
	}
	if len(got) != 2 || got[0].String() != want[0] || got[1].String() != want[1] {
		t.Fatalf("wanted %q, got %+v", want, got)
	}

	offline := LookupDependencyPRs(context.Background(), nil, d, "no GITHUB_TOKEN or GH_TOKEN")
	if w := "sgl-project/sglang#1234: lookup skipped: no GITHUB_TOKEN or GH_TOKEN"; len(offline) != 2 || offline[0].String() != w {
		t.Errorf("wanted %q, got %+v", w, offline)
	}

	d.SGLang = deps.Ref{Ref: "#777", Fetch: "refs/pull/777/head", Source: deps.FromInput}
	d.Megatron = deps.Ref{Ref: "miles-main", Fetch: "miles-main", Source: deps.FromDefault}
	failed := LookupDependencyPRs(context.Background(), newClient(t, s, Options{}), d, "")
	if len(failed) != 1 || !strings.HasPrefix(failed[0].String(), "sgl-project/sglang#777: lookup failed: reading pull request sgl-project/sglang#777: not found (404)") {
		t.Errorf("wanted one failed lookup of #777, got %+v", failed)
	}
}

// TestAPIURLCarriesNoCredentials: a password in GITHUB_API_URL would be
// printed in every error that names a request URL, so it is refused before
// any request, and the refusal does not print it either.
func TestAPIURLCarriesNoCredentials(t *testing.T) {
	for _, u := range []string{"https://user:s3cret@api.example.com/", "https://s3cret@api.example.com/"} {
		_, err := NewClient(Options{APIURL: u})
		want := "GitHub API URL https://api.example.com/ carries credentials; set GITHUB_TOKEN or GH_TOKEN instead and drop them from GITHUB_API_URL"
		if err == nil || err.Error() != want {
			t.Errorf("%s: wanted %q, got %v", u, want, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the secret: %v", u, err)
		}
	}
}
