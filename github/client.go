package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// Defaults of Options.
const (
	// DefaultAPIURL is GitHub's REST API.
	DefaultAPIURL = "https://api.github.com/"
	// DefaultTimeout bounds one API request.
	DefaultTimeout = 30 * time.Second
	// MaxResponseSize bounds one API response body; a page of 100 changed
	// files with their patches stays well below it.
	MaxResponseSize = 32 << 20
	// MaxBodySize bounds a PR description: GitHub caps it at 65536
	// characters, which is at most 256 KiB of UTF-8.
	MaxBodySize = 1 << 20
)

// Options say how to reach GitHub.
type Options struct {
	// APIURL is the REST API root (GITHUB_API_URL in Actions); "" is api.github.com.
	APIURL string
	// Token authenticates the requests ("" = anonymous: public repositories
	// only, 60 requests an hour). It only ever travels in a request header.
	Token string
	// Timeout bounds each request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Transport replaces the HTTP transport (tests); nil is the default one.
	Transport http.RoundTripper
	// MaxResponseSize bounds one response body; 0 means MaxResponseSize.
	MaxResponseSize int64
	// TokenFrom is where a user gives the token, for the hints of errors
	// ("" = the environment, GITHUB_TOKEN or GH_TOKEN).
	TokenFrom string
}

// Client reads pull requests from GitHub's REST API.
type Client struct {
	api       *gh.Client
	host      string
	token     bool
	tokenFrom string
	timeout   time.Duration
}

// NewClient makes a client; it checks the API URL but sends nothing yet.
func NewClient(o Options) (*Client, error) {
	base := o.APIURL
	if base == "" {
		base = DefaultAPIURL
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	u, err := url.Parse(base)
	if err == nil && u.User != nil {
		// go-github's errors print the request URL, password included.
		u.User = nil
		return nil, fmt.Errorf("GitHub API URL %s carries credentials; set GITHUB_TOKEN or GH_TOKEN instead and drop them from GITHUB_API_URL", u)
	}
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("GitHub API URL %q is not an http(s) URL; set GITHUB_API_URL to e.g. %s or unset it", o.APIURL, DefaultAPIURL)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	transport := o.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	limit := o.MaxResponseSize
	if limit <= 0 {
		limit = MaxResponseSize
	}
	hc := &http.Client{Timeout: timeout, Transport: boundedTransport{transport, limit}}
	api := gh.NewClient(hc)
	if o.Token != "" {
		api = api.WithAuthToken(o.Token)
	}
	api.BaseURL = u
	return &Client{api: api, host: u.Host, token: o.Token != "", tokenFrom: o.TokenFrom, timeout: timeout}, nil
}

// FetchPR reads one pull request and all its changed files.
func (c *Client) FetchPR(ctx context.Context, repo string, number int) (*PR, error) {
	p, err := c.GetPR(ctx, repo, number)
	if err != nil {
		return nil, err
	}
	if p.Files, err = c.ListFiles(ctx, repo, number); err != nil {
		return nil, err
	}
	return p, nil
}

// GetPR reads one pull request without its changed files.
func (c *Client) GetPR(ctx context.Context, repo string, number int) (*PR, error) {
	owner, name, err := ParseRepo(repo)
	if err != nil {
		return nil, err
	}
	ref := fmt.Sprintf("%s#%d", repo, number)
	pr, _, err := c.api.PullRequests.Get(ctx, owner, name, number)
	if err != nil {
		return nil, c.explain(err, "reading pull request "+ref)
	}
	return fromAPI(repo, pr)
}

// ListFiles reads every page of a pull request's changed files, up to the
// 3,000 GitHub lists.
func (c *Client) ListFiles(ctx context.Context, repo string, number int) ([]File, error) {
	owner, name, err := ParseRepo(repo)
	if err != nil {
		return nil, err
	}
	files := []File{}
	opts := &gh.ListOptions{PerPage: 100, Page: 1}
	for page := 1; ; page++ {
		batch, resp, err := c.api.PullRequests.ListFiles(ctx, owner, name, number, opts)
		if err != nil {
			return nil, c.explain(err, fmt.Sprintf("listing the changed files of %s#%d (page %d)", repo, number, opts.Page))
		}
		for _, f := range batch {
			files = append(files, fileFromAPI(f))
		}
		// A next page that does not move forward, or more pages than GitHub
		// ever serves, would loop: stop at the cap instead.
		if resp.NextPage <= opts.Page || len(files) >= MaxChangedFiles || page > MaxChangedFiles/opts.PerPage {
			return files, nil
		}
		opts.Page = resp.NextPage
	}
}

func fromAPI(repo string, pr *gh.PullRequest) (*PR, error) {
	p := &PR{
		Repo:         repo,
		Number:       pr.GetNumber(),
		Title:        pr.GetTitle(),
		State:        pr.GetState(),
		Body:         pr.GetBody(),
		HeadSHA:      pr.GetHead().GetSHA(),
		MergeSHA:     pr.GetMergeCommitSHA(),
		BaseRef:      pr.GetBase().GetRef(),
		HeadRepo:     pr.GetHead().GetRepo().GetFullName(),
		ChangedFiles: pr.GetChangedFiles(),
		Labels:       []string{},
		Source:       "api",
	}
	if pr.GetMerged() || pr.MergedAt != nil {
		p.State = "merged"
	}
	for _, l := range pr.Labels {
		p.Labels = append(p.Labels, l.GetName())
	}
	base := pr.GetBase().GetRepo().GetFullName()
	if base == "" {
		base = repo
	}
	p.Fork = p.HeadRepo == "" || !strings.EqualFold(p.HeadRepo, base)
	return p, p.check()
}

// check refuses facts miles-ci cannot act on safely.
func (p *PR) check() error {
	if len(p.Body) > MaxBodySize {
		return fmt.Errorf("%s: the description is %d bytes, more than %d; GitHub caps a description at 65536 characters, so this is not a pull request body", p.Ref(), len(p.Body), MaxBodySize)
	}
	if p.HeadSHA != "" && !isHexSHA(p.HeadSHA) {
		return fmt.Errorf("%s: head SHA %q is not a commit id", p.Ref(), p.HeadSHA)
	}
	if p.MergeSHA != "" && !isHexSHA(p.MergeSHA) {
		return fmt.Errorf("%s: merge commit SHA %q is not a commit id", p.Ref(), p.MergeSHA)
	}
	return nil
}

func isHexSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func fileFromAPI(f *gh.CommitFile) File {
	return File{Status: f.GetStatus(), Path: f.GetFilename(), PreviousPath: f.GetPreviousFilename(), Changes: f.GetChanges()}
}

// explain turns an API failure into an error that says what to set.
func (c *Client) explain(err error, doing string) error {
	var (
		rate   *gh.RateLimitError
		abuse  *gh.AbuseRateLimitError
		resp   *gh.ErrorResponse
		netErr net.Error
		big    *tooLargeError
	)
	// The hints name where a token is given: the environment for the
	// command, an argument for the Dagger module.
	give, where, renew := "set GITHUB_TOKEN or GH_TOKEN to a token", "GITHUB_TOKEN or GH_TOKEN", "renew GITHUB_TOKEN/GH_TOKEN, or unset both"
	used := "the token in GITHUB_TOKEN/GH_TOKEN has used its quota"
	if c.tokenFrom != "" {
		give, where, renew = "give a token with "+c.tokenFrom, c.tokenFrom, "renew the token of "+c.tokenFrom+", or give none"
		used = "the token of " + c.tokenFrom + " has used its quota"
	}
	tokenHint := give + " (5,000 requests an hour instead of 60)"
	if c.token {
		tokenHint = used
	}
	switch {
	case errors.As(err, &rate):
		return fmt.Errorf("%s: GitHub API rate limit exceeded (%d requests an hour, resets at %s); %s, or wait until then: %w",
			doing, rate.Rate.Limit, rate.Rate.Reset.UTC().Format("15:04:05 UTC"), tokenHint, err)
	case errors.As(err, &abuse):
		wait := "a minute"
		if abuse.RetryAfter != nil {
			wait = abuse.RetryAfter.String()
		}
		return fmt.Errorf("%s: GitHub's secondary rate limit refused the request; wait %s and try again: %w", doing, wait, err)
	case errors.As(err, &big):
		return fmt.Errorf("%s: %w", doing, err)
	case errors.As(err, &resp) && resp.Response != nil:
		switch resp.Response.StatusCode {
		case http.StatusNotFound:
			hint := "check --pr and --github-repo"
			if !c.token {
				hint += "; a private repository also needs " + where
			}
			return fmt.Errorf("%s: not found (404); %s: %w", doing, hint, err)
		case http.StatusUnauthorized:
			return fmt.Errorf("%s: GitHub refused the token (401); %s to read a public repository anonymously: %w", doing, renew, err)
		case http.StatusTooManyRequests:
			return fmt.Errorf("%s: GitHub API rate limit exceeded (429); %s, or wait: %w", doing, tokenHint, err)
		case http.StatusForbidden:
			return fmt.Errorf("%s: forbidden (403); the token needs read access to pull requests (contents: read, pull-requests: read): %w", doing, err)
		}
		return fmt.Errorf("%s: GitHub answered %d: %w", doing, resp.Response.StatusCode, err)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("%s: no answer from %s within %s; check the network (or HTTPS_PROXY), or work offline with --pr-body-file, --pr-labels-json and --changed-files: %w", doing, c.host, c.timeout, err)
	}
	return fmt.Errorf("%s: %w; check the network, or work offline with --pr-body-file, --pr-labels-json and --changed-files", doing, err)
}

// boundedTransport fails a response whose body grows past limit, so a broken
// or hostile server cannot make miles-ci read without end.
type boundedTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.limit, limit: t.limit, url: req.URL.Path}
	return resp, nil
}

type limitedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64
	url   string
}

// tooLargeError is a response body over the bound.
type tooLargeError struct {
	path  string
	limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("the response to %s is larger than %d bytes; this is not an answer GitHub gives, check GITHUB_API_URL", e.path, e.limit)
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly limit bytes from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, &tooLargeError{b.url, b.limit}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
