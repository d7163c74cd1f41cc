package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"dagger.io/dagger/engineconn"
)

// The bounds of a `dagger session` process (the CLI's side of a
// connection, which the SDK would start and stop itself). The CLI ends a
// session when its stdin closes, but only once it has connected: while it
// connects to an engine that does not answer it ignores stdin and SIGTERM,
// and the SDK waits 5 minutes for it before a SIGKILL. miles-ci starts it in
// a session of its own and stops it in at most closeGrace+termGrace.
var (
	// closeGrace is how long a session has to end after its stdin closes.
	closeGrace = time.Second
	// termGrace is how long it has after SIGTERM, before SIGKILL.
	termGrace = 500 * time.Millisecond
	// sessionStartTimeout bounds the wait for the session's connect
	// parameters, as the SDK bounds it.
	sessionStartTimeout = 5 * time.Minute
	// dialTimeout bounds the dial that tells a refused engine from a slow one.
	dialTimeout = 5 * time.Second
	// CheckTimeout bounds Check's question to the engine.
	CheckTimeout = 10 * time.Second
)

// sessionProc is a running `dagger session`.
type sessionProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailBuffer
	// exited is closed once the process has ended and its output is read;
	// err is then how it ended.
	exited chan struct{}
	err    error
	stop   func()
}

// startSession starts `dagger session` with bin for the engine at
// runnerHost ("" = the environment's) and waits for its connect
// parameters. The session ends when ctx does, or on Close. Its stderr (the
// engine's progress) goes to log.
func startSession(ctx context.Context, bin, runnerHost string, log io.Writer) (*sessionProc, engineconn.ConnectParams, error) {
	var params engineconn.ConnectParams
	cmd := exec.Command(bin, "session", "--label", "dagger.io/sdk.name:go", "--label", "dagger.io/sdk.version:"+engineconn.CLIVersion)
	cmd.Env = os.Environ()
	if runnerHost != "" {
		cmd.Env = append(cmd.Env, "_EXPERIMENTAL_DAGGER_RUNNER_HOST="+runnerHost)
	}
	// Its own session: no signal of this terminal reaches it, and its
	// process group (whatever it starts) is stopped as one.
	cmd.SysProcAttr = sessionAttr()
	first := &firstLine{got: make(chan []byte, 1)}
	cmd.Stdout = first
	p := &sessionProc{cmd: cmd, stderr: &tailBuffer{max: 4 << 10}, exited: make(chan struct{})}
	if log == nil {
		log = io.Discard
	}
	cmd.Stderr = io.MultiWriter(log, p.stderr)
	cmd.WaitDelay = time.Second // a child that keeps its output open is not waited for
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, params, err
	}
	p.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, params, fmt.Errorf("starting %s session: %w", bin, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	p.stop = sync.OnceFunc(p.end)
	go func() {
		select {
		case <-ctx.Done():
			p.stop()
		case <-p.exited:
		}
	}()
	timeout := time.NewTimer(sessionStartTimeout)
	defer timeout.Stop()
	select {
	case line := <-first.got:
		if err := json.Unmarshal(line, &params); err != nil || params.Port == 0 {
			p.stop()
			return nil, params, fmt.Errorf("the dagger session's first line is not its connect parameters (%q)%s", bytes.TrimSpace(line), p.said())
		}
		return p, params, nil
	case <-p.exited:
		return nil, params, fmt.Errorf("the dagger session ended before it connected (%v)%s", p.err, p.said())
	case <-ctx.Done():
		p.stop()
		return nil, params, ctx.Err()
	case <-timeout.C:
		p.stop()
		return nil, params, fmt.Errorf("the dagger session did not connect in %s%s", sessionStartTimeout, p.said())
	}
}

// end stops the session: stdin closed (the CLI's own way out), then SIGTERM
// and SIGKILL to its process group, each after a grace; what is left of the
// group once it ended is killed too.
func (p *sessionProc) end() {
	p.stdin.Close()
	pid := p.cmd.Process.Pid
	if !p.waitFor(closeGrace) {
		syscall.Kill(-pid, syscall.SIGTERM)
		if !p.waitFor(termGrace) {
			syscall.Kill(-pid, syscall.SIGKILL)
			<-p.exited
		}
	}
	syscall.Kill(-pid, syscall.SIGKILL)
}

// waitFor reports whether the process ended within d.
func (p *sessionProc) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// ended says how the session ended, or nil while it runs.
func (p *sessionProc) ended() error {
	select {
	case <-p.exited:
		return fmt.Errorf("its dagger session ended (%v)%s", p.err, p.said())
	default:
		return nil
	}
}

// said is the end of what the session wrote on stderr, for an error: ":
// TEXT", or "" when it wrote nothing (all of it once the process ended).
func (p *sessionProc) said() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return ""
	}
	return ": " + s
}

// conn is a session's connection for the SDK (dagger.WithConn): its HTTP
// endpoint on the loopback with its token; closing it ends the session.
type conn struct {
	*http.Client
	p *sessionProc
}

func newConn(p *sessionProc, params engineconn.ConnectParams) *conn {
	addr := fmt.Sprintf("127.0.0.1:%d", params.Port)
	var d net.Dialer
	transport := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", addr)
	}}
	return &conn{p: p, Client: &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r.SetBasicAuth(params.SessionToken, "")
		return transport.RoundTrip(r)
	})}}
}

func (c *conn) Host() string { return "dagger" }

func (c *conn) Close() error {
	c.p.stop()
	return nil
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reach dials an engine address miles-ci can dial itself (tcp://, unix://):
// a refused connection, a missing socket or an unknown host is an answer at
// once, where the dagger CLI would retry it for minutes. A dial that takes
// longer than dialTimeout says nothing (a slow network, a busy engine): the
// session is tried as ever.
func reach(ctx context.Context, runnerHost string) error {
	network, addr, ok := dialAddress(runnerHost)
	if !ok {
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(dctx, network, addr)
	if err == nil {
		c.Close()
		return nil
	}
	if dctx.Err() != nil {
		return ctx.Err()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	return fmt.Errorf("%s takes no connection: %w", runnerHost, err)
}

// dialAddress is the network and address of a tcp:// or unix:// engine.
func dialAddress(runnerHost string) (network, addr string, ok bool) {
	u, err := url.Parse(runnerHost)
	if err != nil {
		return "", "", false
	}
	switch {
	case u.Scheme == "tcp" && u.Host != "":
		return "tcp", u.Host, true
	case u.Scheme == "unix" && u.Path != "":
		return "unix", u.Path, true
	}
	return "", "", false
}

// firstLine keeps the first line written to it (at most 64 KiB) and
// discards the rest.
type firstLine struct {
	mu   sync.Mutex
	buf  []byte
	done bool
	got  chan []byte
}

func (w *firstLine) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(b), nil
	}
	w.buf = append(w.buf, b...)
	if i := bytes.IndexByte(w.buf, '\n'); i >= 0 || len(w.buf) > 64<<10 {
		if i < 0 {
			i = len(w.buf)
		}
		w.done = true
		w.got <- w.buf[:i]
	}
	return len(b), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append([]byte{}, t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
