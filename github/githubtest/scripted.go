package githubtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Route is the stand-in's answers to one request, by method and the path
// with its query exactly as sent: the nth such request gets Replies[n],
// later ones the last.
type Route struct {
	Method  string  `json:"method"`
	Path    string  `json:"path"`
	Replies []Reply `json:"replies"`
}

// Reply is one answer: a status and a body, sent as they are.
type Reply struct {
	Status int
	Body   string
}

// replyJSON is a Reply as a file holds it: a body that is compact JSON as
// the JSON itself ("json"), any other as a string ("body").
type replyJSON struct {
	Status int             `json:"status"`
	JSON   json.RawMessage `json:"json,omitempty"`
	Body   string          `json:"body,omitempty"`
}

// MarshalJSON writes the body as JSON where that keeps its bytes.
func (r Reply) MarshalJSON() ([]byte, error) {
	out := replyJSON{Status: r.Status, Body: r.Body}
	if AsJSON(r.Body) {
		out.JSON, out.Body = json.RawMessage(r.Body), ""
	}
	return json.Marshal(out)
}

// AsJSON says whether text can be written into a JSON file as JSON and read
// back byte for byte: compact JSON, with nothing json.Marshal escapes
// (<, >, &, U+2028, U+2029).
func AsJSON(text string) bool {
	var c bytes.Buffer
	return text != "" && json.Valid([]byte(text)) && json.Compact(&c, []byte(text)) == nil && c.String() == text &&
		!strings.ContainsAny(text, "<>&\u2028\u2029")
}

// UnmarshalJSON reads either form.
func (r *Reply) UnmarshalJSON(data []byte) error {
	var in replyJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	r.Status, r.Body = in.Status, in.Body
	if in.JSON != nil {
		r.Body = string(in.JSON)
	}
	return nil
}

// Request is one request the scripted stand-in served.
type Request struct {
	Method string
	// Path is the path and query as the client sent them (RequestURI).
	Path string
	Body string
	// Token says whether it carried an Authorization header.
	Token bool
}

// Scripted is a stand-in API that answers from Routes and records every
// request, for comparing two clients' calls (the comment gateway's
// differential tests). A request no route names gets 404.
type Scripted struct {
	// URL is the API root, without a trailing slash.
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	routes   []Route
	seen     map[int]int
	requests []Request
	auth     []string
}

// StartScripted serves routes until Close.
func StartScripted(routes []Route) *Scripted {
	s := &Scripted{routes: routes, seen: map[int]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Scripted) Close() { s.srv.Close() }

// Reset forgets the requests served and starts every route's replies over,
// with new routes.
func (s *Scripted) Reset(routes []Route) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes, s.seen, s.requests, s.auth = routes, map[int]int{}, nil, nil
}

// Requests are the requests served so far, in order.
func (s *Scripted) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Authorizations are the Authorization headers of the requests served.
func (s *Scripted) Authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func (s *Scripted) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.RequestURI, Body: string(body), Token: r.Header.Get("Authorization") != ""})
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	reply := Reply{Status: http.StatusNotFound, Body: `{"message":"Not Found","status":"404"}`}
	for i, rt := range s.routes {
		if rt.Method == r.Method && rt.Path == r.RequestURI && len(rt.Replies) > 0 {
			n := min(s.seen[i], len(rt.Replies)-1)
			s.seen[i]++
			reply = rt.Replies[n]
			break
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(reply.Status)
	io.WriteString(w, reply.Body)
}
