//go:build !unix

package fsinput

import (
	"io/fs"
	"os"
)

// readFile is a file opened for reading; only unix has FIFOs to guard against.
type readFile struct{ f *os.File }

func openRead(path string, _ bool) (readFile, error) {
	f, err := os.Open(path)
	return readFile{f}, err
}

func (f readFile) close() { f.f.Close() }

// noFollow is none where the platform has no O_NOFOLLOW.
const noFollow = 0

func (f readFile) stat() (fs.FileMode, int64, error) {
	info, err := f.f.Stat()
	if err != nil {
		return 0, 0, err
	}
	return info.Mode(), info.Size(), nil
}

func (f readFile) read(b []byte) (int, error) { return f.f.Read(b) }

// openAppendNoBlock opens path for appending.
func openAppendNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
}

// noReader is false: only unix has FIFOs to guard against.
func noReader(error) bool { return false }
