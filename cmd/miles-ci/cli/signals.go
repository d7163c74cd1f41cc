package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stopSignals are the signals that stop a command: the first cancels its
// context (a run's running shards stop, the finished ones keep their
// results; a store call ends), a second ends the process at once.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// exitNow ends the process on a second signal; tests replace it.
var exitNow = os.Exit

// signalContext is a command's context: cancelled by the first SIGINT or
// SIGTERM; the second exits with ExitInterrupted without waiting for
// anything (a store that does not answer, a shard that does not stop).
func signalContext(env Env) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			fmt.Fprintf(env.Stderr, "miles-ci: a second signal (%v): exiting now\n", sig)
			exitNow(ExitInterrupted)
		case <-done:
		}
	}()
	return ctx, sync.OnceFunc(func() {
		signal.Stop(ch)
		close(done)
		cancel()
	})
}
