//go:build unix

package fsinput

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without waiting for a writer, so a FIFO
// put in place after the check fails the check on the open file instead of
// hanging.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
