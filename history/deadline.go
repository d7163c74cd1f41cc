package history

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The deadlines of a store's calls, so a store that accepts a connection
// and never answers costs a command a bounded time (a run's recording is
// bounded once more, as a whole, by its caller).
const (
	// ConnectTimeout bounds opening a store: the connection and the check
	// of its table.
	ConnectTimeout = 10 * time.Second
	// StatementTimeout bounds one call on an open store: a batch's
	// transaction, or one read.
	StatementTimeout = 30 * time.Second
)

// connectTimeout and statementTimeout are the deadlines a new store gets
// (tests shorten them).
var connectTimeout, statementTimeout = ConnectTimeout, StatementTimeout

// sqliteBusy is how long a SQLite write waits for another process's lock
// (tests shorten it); a locked file then fails once per recording, since a
// recording stops at the store's first failure.
var sqliteBusy = 10 * time.Second

// ErrStalled is a store that did not answer before a deadline.
var ErrStalled = errors.New("no answer in time")

// ErrInterrupted is a store call that a signal (the caller's context)
// stopped.
var ErrInterrupted = errors.New("interrupted")

// call runs fn under limit below ctx. When a deadline or ctx ends it, the
// error says so (ErrStalled, ErrInterrupted) instead of the driver's words.
func (s *sqlStore) call(ctx context.Context, limit time.Duration, what string, fn func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	err := fn(cctx)
	if err == nil || cctx.Err() == nil {
		return err
	}
	noun := s.noun
	if noun == "" {
		noun = "the runtime history"
	}
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("%s %s %s: %w before it answered", what, noun, s.where, ErrInterrupted)
	case ctx.Err() != nil:
		return fmt.Errorf("%s %s %s: %w (the deadline of the whole recording passed)", what, noun, s.where, ErrStalled)
	}
	return fmt.Errorf("%s %s %s: %w (none within %s); is the server up and answering, and the table not locked by another session?", what, noun, s.where, ErrStalled, limit)
}
