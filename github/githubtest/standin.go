// Package githubtest is a stand-in for GitHub's REST API, for tests: it
// serves recorded pull request JSON from a folder, pages the changed files as
// GitHub does (per_page, page, Link headers) and can answer with the failures
// miles-ci must explain (rate limit, timeout). It never reaches the network.
package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a running stand-in API.
type Server struct {
	// URL is the API root to give the client (go-github's BaseURL).
	URL string
	srv *httptest.Server
	dir string

	mu sync.Mutex
	// RateLimited makes every request answer 403 with GitHub's rate-limit headers.
	RateLimited bool
	// Stall makes every request wait this long before answering (or until the client gives up).
	Stall time.Duration
	// Files replaces the recorded changed files of every PR (to serve thousands).
	Files []map[string]any
	// Requests counts the requests served.
	Requests int
	// Tokens records the Authorization header of each request.
	Tokens []string
	// Log, when set, gets one line per request: method, path and query, and
	// whether it carried a token (never the token itself).
	Log io.Writer
}

// RateLimitReset is the reset time the rate-limited answers carry.
var RateLimitReset = time.Date(2026, 5, 4, 15, 30, 0, 0, time.UTC)

var (
	pullPath  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/([0-9]+)$`)
	filesPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/([0-9]+)/files$`)
)

// Start serves the recorded answers under dir: repos/OWNER/NAME/pulls/N.json
// for a pull request, repos/OWNER/NAME/pulls/N/files.json for all its
// changed files, and any other GET without a query from the file of its
// path plus .json (repos/OWNER/NAME/collaborators/LOGIN/permission.json).
// Close it when done.
func Start(dir string) *Server {
	s := &Server{dir: dir}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/"
	return s
}

// StartOn is Start listening on addr (host:port, port 0 for any), e.g. an
// address that containers reach, where Start listens on loopback only.
func StartOn(dir, addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL + "/"
	return s, nil
}

// SetLog sets Log while the server runs.
func (s *Server) SetLog(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Log = w
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.Requests++
	s.Tokens = append(s.Tokens, r.Header.Get("Authorization"))
	stall, limited, files := s.Stall, s.RateLimited, s.Files
	if s.Log != nil {
		auth := "anonymous"
		if r.Header.Get("Authorization") != "" {
			auth = "with a token"
		}
		fmt.Fprintf(s.Log, "%s %s (%s)\n", r.Method, r.URL.RequestURI(), auth)
	}
	s.mu.Unlock()
	if stall > 0 {
		select {
		case <-time.After(stall):
		case <-r.Context().Done():
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-RateLimit-Limit", "60")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(RateLimitReset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	if limited {
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", "60")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"API rate limit exceeded for 203.0.113.7. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`)
		return
	}
	h.Set("X-RateLimit-Remaining", "59")
	h.Set("X-RateLimit-Used", "1")
	if m := pullPath.FindStringSubmatch(r.URL.Path); m != nil {
		s.serveFile(w, filepath.Join(s.dir, "repos", m[1], m[2], "pulls", m[3]+".json"))
		return
	}
	if m := filesPath.FindStringSubmatch(r.URL.Path); m == nil && r.Method == http.MethodGet && r.URL.RawQuery == "" && strings.HasPrefix(r.URL.Path, "/repos/") {
		// Any other answer recorded under its path (a collaborator's
		// permission: repos/OWNER/NAME/collaborators/LOGIN/permission.json).
		if clean := path.Clean(r.URL.Path); clean == r.URL.Path {
			if data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(clean)+".json")); err == nil {
				w.Write(data)
				return
			}
		}
	}
	if m := filesPath.FindStringSubmatch(r.URL.Path); m != nil {
		if files == nil {
			data, err := os.ReadFile(filepath.Join(s.dir, "repos", m[1], m[2], "pulls", m[3], "files.json"))
			if err != nil {
				notFound(w)
				return
			}
			if err := json.Unmarshal(data, &files); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		s.page(w, r, files)
		return
	}
	notFound(w)
}

func (s *Server) serveFile(w http.ResponseWriter, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		notFound(w)
		return
	}
	w.Write(data)
}

// page answers one page of a list as GitHub does: per_page (default 30, at
// most 100), page from 1, a Link header to the next and last pages, and no
// more than 3,000 items in all.
func (s *Server) page(w http.ResponseWriter, r *http.Request, items []map[string]any) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	items = items[:min(len(items), 3000)]
	last := max((len(items)+per-1)/per, 1)
	from, to := min((page-1)*per, len(items)), min(page*per, len(items))
	if page < last {
		link := func(p int, rel string) string {
			u := *r.URL
			u.Scheme, u.Host = "http", r.Host
			v := u.Query()
			v.Set("page", strconv.Itoa(p))
			u.RawQuery = v.Encode()
			return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
		}
		w.Header().Set("Link", link(page+1, "next")+", "+link(last, "last"))
	}
	json.NewEncoder(w).Encode(items[from:to])
}

func notFound(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/pulls/pulls#get-a-pull-request","status":"404"}`)
}

// File is one changed file shaped like GitHub's answer, for Server.Files.
func File(status, path, previous string, changes int) map[string]any {
	f := map[string]any{
		"sha":          "0f3a1c5e8b7d9a2c4e6f8091a3b5c7d9e1f20304",
		"filename":     path,
		"status":       status,
		"additions":    changes,
		"deletions":    0,
		"changes":      changes,
		"blob_url":     "https://github.com/radixark/miles/blob/5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d/" + path,
		"raw_url":      "https://github.com/radixark/miles/raw/5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d/" + path,
		"contents_url": "https://api.github.com/repos/radixark/miles/contents/" + path + "?ref=5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d",
	}
	if previous != "" {
		f["previous_filename"] = previous
	}
	return f
}
