//go:build unix

package resultsdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock holds the results folder dir against a second miles-ci that would
// replace it while this one runs: an exclusive flock on a file beside it
// (.NAME.miles-ci-lock in its parent), which unlock removes (issue 40: the
// files were left beside every results folder); a process that ends
// without unlocking frees the lock and leaves the file, which the next
// run takes and removes. A folder another process holds is an error at once.
func Lock(dir string) (unlock func(), err error) {
	clean := filepath.Clean(dir)
	name := filepath.Join(filepath.Dir(clean), "."+filepath.Base(clean)+".miles-ci-lock")
	for {
		f, err := lockFile(dir, name)
		if err != nil {
			return nil, err
		}
		// The holder before removed the file after this one opened it: its
		// lock is on a file no other run finds, so take the new one.
		if !samePath(f, name) {
			f.Close()
			continue
		}
		return func() {
			os.Remove(name) // while held: a run that opened it sees it gone
			f.Close()
		}, nil
	}
}

// lockFile opens name and takes its flock, or says who holds it.
func lockFile(dir, name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--results %s: locking it against a second run: %w", dir, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("--results %s is being written by another miles-ci run (it holds %s); wait for it to end, or give another folder", dir, name)
		}
		return nil, fmt.Errorf("--results %s: locking it against a second run: %w", dir, err)
	}
	return f, nil
}

// samePath reports whether the open file f is still the file at name.
func samePath(f *os.File, name string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(name)
	return err == nil && os.SameFile(held, now)
}
