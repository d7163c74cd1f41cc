package ci

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/stagerun"
)

// Session is one engine session of a run (the command's engine.Session).
type Session interface {
	// Container is an empty container of the session.
	Container() stagerun.Container
	// Check says whether its engine still answers (nil), asked after a
	// shard there could not run.
	Check(ctx context.Context) error
	// Close ends the session; it never waits long (its engine may be gone).
	Close() error
}

// FleetConnectTimeout bounds the connection to one host's engine that takes
// it but does not answer: the host is then down. An engine that refuses the
// connection is down at once (the command's engine adapter says so).
const FleetConnectTimeout = 2 * time.Minute

// Fleet is the engine sessions of a --hosts run (rules §14): each host's
// opened on first use, while the other hosts' shards go on, and kept for the
// run. A host whose engine cannot be reached, or stops answering while its
// shards run, is down for the rest of the run: EngineShards hands its
// shards back to the scheduler, which places them on another host of their
// kind or ends them not-run naming it.
type Fleet struct {
	hosts   []cirun.Host
	connect func(ctx context.Context, h cirun.Host) (Session, error)
	// Timeout is FleetConnectTimeout (tests shorten it).
	Timeout time.Duration

	// ctx is the sessions' (the run's until Close).
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	conns  map[string]*hostConn
	// late are the connections given up on that may still open a session,
	// which Close waits for (and closes).
	late sync.WaitGroup
}

// hostConn is one host's session, or why it has none, once done is closed;
// down is set when the host stopped answering later.
type hostConn struct {
	done chan struct{}
	s    Session
	err  error
	down error
}

// NewFleet is the sessions of hosts, each opened with connect on ctx (the
// run's: a session ends with it, or with Close).
func NewFleet(ctx context.Context, hosts []cirun.Host, connect func(ctx context.Context, h cirun.Host) (Session, error)) *Fleet {
	ctx, cancel := context.WithCancel(ctx)
	return &Fleet{hosts: hosts, connect: connect, Timeout: FleetConnectTimeout, ctx: ctx, cancel: cancel, conns: map[string]*hostConn{}}
}

// Names are the hosts' names in the order given (EngineShards.Fleet).
func (f *Fleet) Names() []string {
	var out []string
	for _, h := range f.hosts {
		out = append(out, h.Name)
	}
	return out
}

// On is the host's session (EngineShards.On), connecting once; an error
// says why the host is down.
func (f *Fleet) On(ctx context.Context, name string) (func() stagerun.Container, error) {
	f.mu.Lock()
	c, ok := f.conns[name]
	if !ok {
		c = &hostConn{done: make(chan struct{})}
		f.conns[name] = c
		go f.open(name, c)
	}
	f.mu.Unlock()
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case c.err != nil:
		return nil, c.err
	case c.down != nil:
		return nil, c.down
	}
	return c.s.Container, nil
}

// Down says whether a host is down (EngineShards.Down), asked after a shard
// there could not run: its connection failed, or its engine no longer
// answers (Session.Check). A host found down stays down, and its session is
// closed, so the shards still running there end now and come back too.
func (f *Fleet) Down(ctx context.Context, name string) error {
	f.mu.Lock()
	c, ok := f.conns[name]
	f.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil
	}
	f.mu.Lock()
	switch {
	case c.err != nil:
		f.mu.Unlock()
		return c.err
	case c.down != nil:
		f.mu.Unlock()
		return c.down
	}
	f.mu.Unlock()
	err := c.s.Check(ctx)
	if err == nil || ctx.Err() != nil {
		return nil
	}
	f.mu.Lock()
	first := c.down == nil
	if first {
		c.down = fmt.Errorf("host %s: %w", name, err)
	}
	down := c.down
	f.mu.Unlock()
	if first {
		c.s.Close()
	}
	return down
}

// open connects to a host's engine on the fleet's context, giving up after
// Timeout (a session that opens later is closed).
func (f *Fleet) open(name string, c *hostConn) {
	defer close(c.done)
	var h cirun.Host
	for _, x := range f.hosts {
		if x.Name == name {
			h = x
		}
	}
	type result struct {
		s   Session
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := f.connect(f.ctx, h)
		if err != nil {
			s = nil
		}
		ch <- result{s, err}
	}()
	t := time.NewTimer(f.Timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		c.s, c.err = r.s, r.err
	case <-t.C:
		c.err = fmt.Errorf("its engine did not answer in %s", f.Timeout)
		f.late.Add(1)
		go func() {
			defer f.late.Done()
			if r := <-ch; r.s != nil {
				r.s.Close()
			}
		}()
	}
	if c.err != nil {
		c.err = fmt.Errorf("host %s: %w", name, c.err)
	}
}

// Close ends every session, those still connecting included, all at once
// and without waiting long for any: no session outlives the run.
func (f *Fleet) Close() {
	f.cancel()
	f.mu.Lock()
	conns := make([]*hostConn, 0, len(f.conns))
	for _, c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			<-c.done
			if c.s != nil {
				c.s.Close()
			}
		})
	}
	wg.Wait()
	f.late.Wait()
}
