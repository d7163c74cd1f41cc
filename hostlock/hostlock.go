// Package hostlock is the host lock (rules §14.3): a shard leases its GPUs
// through one lock file per device in a lock folder, with flock, so that
// every process on the host (two miles-ci runs, a GitHub runner's job
// hook) hands out each device to one holder at a time. The kernel lets a
// lock go when its holder dies, so a killed run frees its devices at once.
//
// Beside the device files, host.lock is taken as Miles'
// tests/ci/github_runner/b200_job_lock.py takes its lock: shared by a
// lease of some of the host's devices, exclusive by a lease of all of
// them, so a runner hook that locks host.lock the same way interoperates.
package hostlock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/device"
)

// HostFile is the whole-host lock beside the device files.
const HostFile = "host.lock"

// DeviceFile is the lock file of device id.
func DeviceFile(id device.ID) string { return "gpu-" + string(id) + ".lock" }

// DefaultDir is the lock folder when --lock-dir gives none: under /run
// where this process may write there, else under /dev/shm (both are
// emptied at boot, as the locks they hold are).
func DefaultDir() string {
	for _, base := range []string{"/run", "/dev/shm"} {
		if syscall.Access(base, 2 /* W_OK */) == nil {
			return filepath.Join(base, "miles-ci", "gpus")
		}
	}
	return filepath.Join(os.TempDir(), "miles-ci-gpus")
}

// Lock is the host lock of one process.
type Lock struct {
	// Dir is the lock folder; every process that shares the host's GPUs
	// must use the same one.
	Dir string
	// Who describes this process to the ones that wait for it (its
	// command line).
	Who string
	// Now is the clock of the "since" a holder records.
	Now func() time.Time
}

// maxHolder bounds what a waiter reads of a holder's record.
const maxHolder = 512

// TryLease takes devs on host h without waiting: the device files
// exclusive, host.lock shared (exclusive when devs are all of h's
// devices). ok false: another process holds some, which held names with
// who holds them.
func (l *Lock) TryLease(h cirun.Host, devs device.Set) (release func(), held cirun.Held, ok bool, err error) {
	if err := l.makeDir(); err != nil {
		return nil, cirun.Held{}, false, err
	}
	sorted := devs.Sorted()
	var files []*os.File
	release = func() {
		for _, f := range files {
			f.Truncate(0) // the record goes with the lease
			f.Close()     // closing the file lets its flock go
		}
		files = nil
	}
	whole := len(h.Devices) > 0 && len(devs) == len(h.Devices)
	hostMode := syscall.LOCK_SH
	if whole {
		hostMode = syscall.LOCK_EX
	}
	hf, hostTaken, err := l.lock(HostFile, hostMode)
	if err != nil {
		return nil, cirun.Held{}, false, err
	}
	if hostTaken {
		files = append(files, hf)
	}
	for _, d := range sorted {
		f, taken, err := l.lock(DeviceFile(d), syscall.LOCK_EX)
		if err != nil {
			release()
			return nil, cirun.Held{}, false, err
		}
		if !taken {
			held.Devices = append(held.Devices, d)
			if held.By == "" {
				held.By = l.holder(DeviceFile(d), "another process")
			}
			continue
		}
		files = append(files, f)
	}
	switch {
	case !hostTaken && len(held.Devices) == 0 && whole:
		held = cirun.Held{Devices: devs, By: "a shared lease of " + HostFile + " (a runner's job on part of the host)"}
	case !hostTaken && len(held.Devices) == 0:
		held = cirun.Held{Devices: devs, By: l.holder(HostFile, "a lease of the whole host")}
	}
	if len(held.Devices) > 0 {
		release()
		return nil, held, false, nil
	}
	rec := fmt.Sprintf("pid %d (%s) since %s\n", os.Getpid(), l.Who, l.now().Format("15:04:05"))
	for i, f := range files {
		// Only a holder writes its record, after taking the lock; host.lock
		// holds one only while it is held whole.
		if i > 0 || whole {
			f.WriteAt([]byte(rec), 0)
		}
	}
	return release, cirun.Held{}, true, nil
}

func (l *Lock) now() time.Time {
	if l.Now == nil {
		return time.Now()
	}
	return l.Now()
}

// makeDir makes the lock folder, open to every user (sticky, as /tmp is):
// a runner's job hook that runs as another user takes the same locks.
func (l *Lock) makeDir() error {
	if _, err := os.Stat(l.Dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return fmt.Errorf("cannot make the lock folder %s: %v; give another with --lock-dir", l.Dir, err)
	}
	os.Chmod(l.Dir, 0o777|os.ModeSticky)
	return nil
}

// lock opens a lock file and tries to flock it; taken false when another
// holds it.
func (l *Lock) lock(name string, mode int) (*os.File, bool, error) {
	path := filepath.Join(l.Dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o666)
	if errors.Is(err, os.ErrPermission) {
		// Another user's lock file: flock needs no write access, only
		// the record does.
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot open the lock file %s: %v; give a lock folder this process may write with --lock-dir", path, err)
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, false, fmt.Errorf("the lock file %s is not a regular file; remove it", path)
	}
	if info.Mode().Perm() != 0o666 {
		f.Chmod(0o666) // best effort: the umask cut what another user needs
	}
	for {
		err = syscall.Flock(int(f.Fd()), mode|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("cannot lock %s: %v", path, err)
	}
	return f, true, nil
}

// holder is what a lock file's holder recorded, as one printable line.
func (l *Lock) holder(name, unknown string) string {
	f, err := os.Open(filepath.Join(l.Dir, name))
	if err != nil {
		return unknown
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxHolder))
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, line)
	if line == "" {
		return unknown
	}
	return line
}
