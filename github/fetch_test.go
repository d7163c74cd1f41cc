package github

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/github/githubtest"
)

// TestFetch checks where Fetch takes a PR's facts from and how many
// requests that costs.
func TestFetch(t *testing.T) {
	events := filepath.Join(fixtures, "events")
	tests := []struct {
		name      string
		req       Request
		requests  int
		source    string
		files     int
		wantHead  string
		wantLabel string
	}{
		{name: "api", req: Request{Number: 2874}, requests: 1, source: "api", wantHead: "5f1d0c7e2b9a"},
		{name: "api with files", req: Request{Number: 2874, Files: true}, requests: 4, source: "api", files: 250, wantHead: "5f1d0c7e2b9a"},
		{name: "event payload", req: Request{Number: 2874, EventPath: filepath.Join(events, "pull_request.json")}, requests: 0, source: "event", wantHead: "5f1d0c7e2b9a"},
		{name: "event payload, files from the api", req: Request{Number: 2874, Files: true, EventPath: filepath.Join(events, "pull_request.json")}, requests: 3, source: "event", files: 250, wantHead: "5f1d0c7e2b9a"},
		{name: "event of another PR", req: Request{Number: 2901, EventPath: filepath.Join(events, "pull_request.json")}, requests: 1, source: "api", wantHead: "8e2c4a6f0b1d"},
		{name: "event of another repository", req: Request{Repo: "octo-dev/miles", Number: 2874, EventPath: filepath.Join(events, "pull_request.json")}, requests: 1},
		{name: "a schedule's event", req: Request{Number: 2874, EventPath: filepath.Join(events, "schedule.json")}, requests: 1, source: "api", wantHead: "5f1d0c7e2b9a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := githubtest.Start(fixtures)
			defer s.Close()
			tt.req.Options.APIURL = s.URL
			pr, err := Fetch(context.Background(), tt.req)
			if tt.source == "" {
				// octo-dev/miles has no recorded PR: the API answers 404.
				if err == nil || !strings.Contains(err.Error(), "reading pull request octo-dev/miles#2874: not found (404)") || s.Requests != tt.requests {
					t.Fatalf("wanted the API's 404 after %d request(s), got %v after %d", tt.requests, err, s.Requests)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Requests != tt.requests || pr.Source != tt.source || len(pr.Files) != tt.files || pr.ShortSHA() != tt.wantHead {
				t.Errorf("wanted %d request(s), source %s, %d files, head %s; got %d, %s, %d, %s",
					tt.requests, tt.source, tt.files, tt.wantHead, s.Requests, pr.Source, len(pr.Files), pr.ShortSHA())
			}
		})
	}
}

// TestFetchNeverShowsTheToken fails the fetch every way it can fail with a
// token set: no error may hold the token, and each names where to give one.
func TestFetchNeverShowsTheToken(t *testing.T) {
	const token = "ghp_fetchTokenThatMustNotLeak0042"
	closed := githubtest.Start(fixtures)
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name  string
		setup func(*githubtest.Server)
		req   Request
		want  string
	}{
		{name: "missing PR", req: Request{Number: 99999},
			want: "reading pull request radixark/miles#99999: not found (404); check --pr and --github-repo: GET "},
		{name: "rate limit", setup: func(s *githubtest.Server) { s.RateLimited = true }, req: Request{Number: 2874},
			want: "reading pull request radixark/miles#2874: GitHub API rate limit exceeded (60 requests an hour, resets at 15:30:00 UTC); the token of --github-token env:GITHUB_TOKEN has used its quota, or wait until then: GET "},
		{name: "timeout", setup: func(s *githubtest.Server) { s.Stall = 5 * time.Second }, req: Request{Number: 2874, Options: Options{Timeout: 50 * time.Millisecond}},
			want: "reading pull request radixark/miles#2874: no answer from 127.0.0.1:"},
		{name: "nothing listening", req: Request{Number: 2874, Options: Options{APIURL: closedURL}},
			want: "reading pull request radixark/miles#2874: "},
		{name: "files over the bound", req: Request{Number: 2874, Files: true, EventPath: filepath.Join(fixtures, "events", "pull_request.json"), Options: Options{MaxResponseSize: 4 << 10}},
			want: "listing the changed files of radixark/miles#2874 (page 1): the response to /repos/radixark/miles/pulls/2874/files is larger than 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := githubtest.Start(fixtures)
			defer s.Close()
			if tt.setup != nil {
				tt.setup(s)
			}
			if tt.req.Options.APIURL == "" {
				tt.req.Options.APIURL = s.URL
			}
			tt.req.Options.Token, tt.req.Options.TokenFrom = token, "--github-token env:GITHUB_TOKEN"
			_, err := Fetch(context.Background(), tt.req)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("wanted an error starting %q, got %v", tt.want, err)
			}
			if strings.Contains(err.Error(), token) || strings.Contains(strings.ToLower(err.Error()), "bearer") {
				t.Errorf("the error shows the token: %v", err)
			}
			for _, got := range s.Tokens {
				if got != "Bearer "+token {
					t.Errorf("wanted the token on every request, got %q", got)
				}
			}
		})
	}
}

// TestFetchAnonymousHintsName checks the hints name the module's argument.
func TestFetchAnonymousHintsName(t *testing.T) {
	s := githubtest.Start(fixtures)
	defer s.Close()
	s.RateLimited = true
	_, err := Fetch(context.Background(), Request{Number: 2874, Options: Options{APIURL: s.URL, TokenFrom: "--github-token env:GITHUB_TOKEN"}})
	want := "reading pull request radixark/miles#2874: GitHub API rate limit exceeded (60 requests an hour, resets at 15:30:00 UTC); give a token with --github-token env:GITHUB_TOKEN (5,000 requests an hour instead of 60), or wait until then: "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("wanted %q..., got %v", want, err)
	}
}

func TestCheckArgs(t *testing.T) {
	tests := []struct {
		name   string
		number int
		repo   string
		apiURL string
		want   string
	}{
		{name: "none", want: ""},
		{name: "a PR", number: 2874, want: ""},
		{name: "a PR of a repository, on an API", number: 1, repo: "sgl-project/sglang", apiURL: "https://ghe.example/api/v3/", want: ""},
		{name: "negative", number: -4, want: "--pr -4 is not a pull request number; give the number, e.g. --pr 2874"},
		{name: "repository alone", repo: "a/b", want: "--github-repo names the repository of --pr; give --pr N too"},
		{name: "API alone", apiURL: "http://127.0.0.1:1/", want: "--github-api-url names the API --pr is read from; give --pr N too"},
		{name: "bad repository", number: 1, repo: "miles", want: `--github-repo "miles" is not a repository; give owner/name, e.g. radixark/miles`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := CheckArgs(tt.number, tt.repo, tt.apiURL); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("wanted %q, got %q", tt.want, got)
			}
		})
	}
}

func TestEncodeDecodePR(t *testing.T) {
	s := githubtest.Start(fixtures)
	defer s.Close()
	pr, err := Fetch(context.Background(), Request{Number: 2874, Files: true, Options: Options{APIURL: s.URL}})
	if err != nil {
		t.Fatal(err)
	}
	text, err := pr.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodePR(text)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pr, back) {
		t.Errorf("wanted the same facts back, got %+v", back)
	}
	for _, bad := range []struct{ in, want string }{
		{`{`, "the pull request's facts do not decode: unexpected end of JSON input"},
		{`{"number": 0}`, "the pull request's facts name no pull request"},
		{`{"repo": "a/b", "number": 1, "head_sha": "--upload-pack=x"}`, `a/b#1: head SHA "--upload-pack=x" is not a commit id`},
	} {
		if _, err := DecodePR(bad.in); err == nil || err.Error() != bad.want {
			t.Errorf("DecodePR(%s): wanted %q, got %v", bad.in, bad.want, err)
		}
	}
}
