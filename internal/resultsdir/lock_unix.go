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
// (.NAME.miles-ci-lock in its parent), released by unlock or when the
// process ends. A folder another process holds is an error at once.
func Lock(dir string) (unlock func(), err error) {
	clean := filepath.Clean(dir)
	name := filepath.Join(filepath.Dir(clean), "."+filepath.Base(clean)+".miles-ci-lock")
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
	return func() { f.Close() }, nil
}
