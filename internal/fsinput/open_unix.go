//go:build unix

package fsinput

import (
	"errors"
	"os"
	"syscall"
)

// openNoBlock opens path for reading without waiting for a writer, so a FIFO
// put in place after the check fails the check on the open file instead of
// hanging.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// openAppendNoBlock opens path for appending without waiting for a reader:
// a FIFO that nothing reads fails with ENXIO instead of hanging. Go's poller
// then waits for a slow reader, so writes still complete.
func openAppendNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY|syscall.O_NONBLOCK, 0o644)
}

// noReader reports whether err is the open of a FIFO that nothing reads.
func noReader(err error) bool { return errors.Is(err, syscall.ENXIO) }
