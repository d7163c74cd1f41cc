//go:build !unix

package fsinput

import "os"

// openNoBlock opens path for reading; only unix has FIFOs to guard against.
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
