package github

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// RawAnswer is GitHub's answer to a Raw request.
type RawAnswer struct {
	// Status is the HTTP status; 0 when no answer came (Err says why).
	Status int
	Body   []byte
	Err    error
	// TimedOut: no answer within the client's timeout.
	TimedOut bool
}

// Raw sends one request exactly as given, through go-github: path is the
// path and query below the API root, escaped by the caller (e.g.
// /repos/radixark/miles/pulls?head=a%3Ab&page=1), and body the JSON bytes
// to send (nil: none). It answers with the status and body of any status,
// for callers that judge GitHub's answer themselves (the comment gateway,
// which must answer as Miles' script does). The token, if any, travels
// only in the Authorization header.
func (c *Client) Raw(ctx context.Context, method, path string, body []byte) RawAnswer {
	req, err := c.api.NewRequest(method, strings.TrimPrefix(path, "/"), nil)
	if err != nil {
		return RawAnswer{Err: err}
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.api.BareDo(ctx, req)
	var accepted *gh.AcceptedError
	switch {
	case errors.As(err, &accepted):
		return RawAnswer{Status: http.StatusAccepted, Body: accepted.Raw}
	case err != nil && resp != nil && resp.Response != nil:
		// An answer outside 2xx: its status is the answer.
		return RawAnswer{Status: resp.StatusCode}
	case err != nil:
		var netErr net.Error
		return RawAnswer{Err: err, TimedOut: errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout()}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return RawAnswer{Err: err}
	}
	return RawAnswer{Status: resp.StatusCode, Body: data}
}
