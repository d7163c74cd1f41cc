//go:build !unix

package fsinput

import "os"

// openNoBlock opens path for reading; only unix has FIFOs to guard against.
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }

// openAppendNoBlock opens path for appending.
func openAppendNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
}

// noReader is false: only unix has FIFOs to guard against.
func noReader(error) bool { return false }
