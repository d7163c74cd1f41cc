//go:build unix

package fsinput

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// readFile is a file opened for reading by its descriptor alone: no
// *os.File, so no poller registration (a regular file cannot be polled; the
// attempt is a system call that fails), no finalizer, and nothing to wrap.
type readFile int

// openRead opens path for reading without waiting for a writer, so a FIFO
// put in place after the check fails the check on the open file instead of
// hanging; a terminal never becomes the controlling one.
func openRead(path string, noLink bool) (readFile, error) {
	flags := syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC
	if noLink {
		flags |= syscall.O_NOFOLLOW // a link swapped in after the check fails the open
	}
	for {
		fd, err := syscall.Open(path, flags, 0)
		if err == syscall.EINTR {
			continue
		}
		return readFile(fd), err
	}
}

func (f readFile) close() { syscall.Close(int(f)) }

// noFollow makes an open fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW

// stat is the opened file's type and size.
func (f readFile) stat() (fs.FileMode, int64, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(int(f), &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		return fileMode(uint32(st.Mode)), st.Size, nil
	}
}

// fileMode is the type bits of a stat mode as fs.FileMode (os.Stat's mapping).
func fileMode(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	}
	return fs.ModeIrregular
}

// read is one read(2); io.EOF at the end of the file.
func (f readFile) read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(int(f), b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(b) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// openAppendNoBlock opens path for appending without waiting for a reader:
// a FIFO that nothing reads fails with ENXIO instead of hanging. Go's poller
// then waits for a slow reader, so writes still complete.
func openAppendNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY|syscall.O_NONBLOCK, 0o644)
}

// noReader reports whether err is the open of a FIFO that nothing reads.
func noReader(err error) bool { return errors.Is(err, syscall.ENXIO) }
