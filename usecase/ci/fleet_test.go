package ci

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/stagerun"
)

// fleetSession is a fake host session that counts its closes and, once
// its engine is gone, answers no Check.
type fleetSession struct {
	gone   *atomic.Bool
	closed *atomic.Int32
}

func (s fleetSession) Container() stagerun.Container { return imageFake{} }
func (s fleetSession) Close() error                  { s.closed.Add(1); return nil }
func (s fleetSession) Check(context.Context) error {
	if s.gone.Load() {
		return errors.New("its engine does not answer")
	}
	return nil
}

// TestFleetDown: a host whose engine stopped answering is down once, with
// its session closed once, and On then says why at once; a host that
// answers is not down.
func TestFleetDown(t *testing.T) {
	gone, closed := &atomic.Bool{}, &atomic.Int32{}
	f := NewFleet(context.Background(), []cirun.Host{{Name: "a"}, {Name: "b"}}, func(context.Context, cirun.Host) (Session, error) {
		return fleetSession{gone: gone, closed: closed}, nil
	})
	ctx := context.Background()
	if _, err := f.On(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := f.Down(ctx, "a"); err != nil {
		t.Errorf("a host that answers: wanted it up, got %v", err)
	}
	if err := f.Down(ctx, "b"); err != nil {
		t.Errorf("a host never connected: wanted it up, got %v", err)
	}
	gone.Store(true)
	for range 3 {
		if err := f.Down(ctx, "a"); err == nil || err.Error() != "host a: its engine does not answer" {
			t.Errorf("wanted a down naming it, got %v", err)
		}
	}
	if closed.Load() != 1 {
		t.Errorf("wanted the down host's session closed once, got %d", closed.Load())
	}
	if _, err := f.On(ctx, "a"); err == nil || err.Error() != "host a: its engine does not answer" {
		t.Errorf("wanted On to say the host is down, got %v", err)
	}
	f.Close()
	if closed.Load() != 2 { // Close closes every session (a second Close of a session is its own to ignore)
		t.Errorf("wanted Close to close the session again, got %d closes", closed.Load())
	}
}

// TestFleetSlowHost: a host that does not answer within the timeout is
// down; the session it opens later is closed, and Close waits for it.
func TestFleetSlowHost(t *testing.T) {
	gone, closed := &atomic.Bool{}, &atomic.Int32{}
	release := make(chan struct{})
	f := NewFleet(context.Background(), []cirun.Host{{Name: "slow"}}, func(context.Context, cirun.Host) (Session, error) {
		<-release
		return fleetSession{gone: gone, closed: closed}, nil
	})
	f.Timeout = 20 * time.Millisecond
	if _, err := f.On(context.Background(), "slow"); err == nil || err.Error() != "host slow: its engine did not answer in 20ms" {
		t.Errorf("wanted the slow host down, got %v", err)
	}
	done := make(chan struct{})
	go func() {
		f.Close()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("Close returned before the late session was closed")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-done
	if closed.Load() != 1 {
		t.Errorf("wanted the late session closed, got %d closes", closed.Load())
	}
}

// TestFleetCloseEndsConnecting: Close ends a connection still under way
// (its context), and returns once it did.
func TestFleetCloseEndsConnecting(t *testing.T) {
	started := make(chan struct{})
	f := NewFleet(context.Background(), []cirun.Host{{Name: "a"}}, func(ctx context.Context, _ cirun.Host) (Session, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	errc := make(chan error, 1)
	go func() {
		_, err := f.On(context.Background(), "a")
		errc <- err
	}()
	<-started
	f.Close()
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("wanted the connection cancelled, got %v", err)
	}
}
