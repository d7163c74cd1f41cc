// Package hostlock is the host lock (rules §14.3): a shard leases its GPUs
// through one lock file per device in a lock folder, with flock, so that
// every process on the host (two miles-ci runs, a GitHub runner's job
// hook) hands out each device to one holder at a time. The kernel lets a
// lock go when its holder dies, so a killed run frees its devices at once.
//
// Beside the device files, each host has a host-wide lock file, taken as
// Miles' tests/ci/github_runner/b200_job_lock.py takes its lock: shared by
// a lease of some of the host's devices, exclusive by a lease of all of
// them, so a runner hook that locks the same file the same way
// interoperates. It is named after the host's devices (host-0-7.lock), so
// two hosts that split one machine (h200:0-3 and h200:4-7) never serialise
// each other. Stand-in devices (--gpus none:...) are no GPU of this
// machine: their files are apart (standin-gpu-0.lock), per named host.
package hostlock

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/device"
	"github.com/radixark/miles-ci/internal/fsinput"
)

// DeviceFile is the lock file of a GPU of this machine.
func DeviceFile(id device.ID) string { return "gpu-" + string(id) + ".lock" }

// HostFile is the host-wide lock file of a host of this machine with the
// given devices: host-0-7.lock for --gpus h200:0-7 (or all, on an 8-GPU
// machine), host.lock when its devices are not known.
func HostFile(devs device.Set) string {
	if len(devs) == 0 {
		return "host.lock"
	}
	ids := devs.Sorted().Ranges()
	if len(ids) > 120 {
		// A long list of uuids: a file name has at most 255 bytes.
		ids = fmt.Sprintf("%x", sha256.Sum256([]byte(ids)))[:32]
	}
	return "host-" + ids + ".lock"
}

// namespace is the prefix of a host's lock files: none for the GPUs of
// this machine; standin- (and the host's name, for a fleet's) for
// stand-ins, whose ids name no GPU, so they never take a real GPU's file.
func namespace(h cirun.Host) string {
	switch {
	case !h.StandIn:
		return ""
	case h.Name != "":
		return "standin-" + h.Name + "-"
	}
	return "standin-"
}

// DefaultDir is the lock folder when --lock-dir gives none, the same for
// every user: /dev/shm/miles-ci-gpus (emptied at boot, as the locks it
// holds are), or under the temporary folder where there is no /dev/shm.
func DefaultDir() string {
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
		return "/dev/shm/miles-ci-gpus"
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
// exclusive, the host's file shared (exclusive when devs are all of h's
// devices). ok false: another process holds some, which held names with
// who holds them. A device named twice is an error (a lease would wait on
// itself), as is a lock folder another user could empty.
func (l *Lock) TryLease(h cirun.Host, devs device.Set) (release func(), held cirun.Held, ok bool, err error) {
	if _, err := device.NewSet(devs...); err != nil {
		return nil, cirun.Held{}, false, fmt.Errorf("a lease of GPUs %s: %w", devs, err)
	}
	if err := l.makeDir(); err != nil {
		return nil, cirun.Held{}, false, err
	}
	ns := namespace(h)
	var files []*os.File
	release = func() {
		for _, f := range files {
			f.Truncate(0) // the record goes with the lease
			f.Close()     // closing the file lets its flock go
		}
		files = nil
	}
	whole := len(h.Devices) > 0 && len(devs) >= len(h.Devices)
	for _, d := range h.Devices {
		whole = whole && devs.Contains(d)
	}
	hostMode := syscall.LOCK_SH
	if whole {
		hostMode = syscall.LOCK_EX
	}
	hostFile := ns + HostFile(h.Devices)
	hf, hostTaken, err := l.lock(hostFile, hostMode)
	if err != nil {
		return nil, cirun.Held{}, false, err
	}
	if hostTaken {
		files = append(files, hf)
	}
	for _, d := range devs.Sorted() {
		f, taken, err := l.lock(ns+DeviceFile(d), syscall.LOCK_EX)
		if err != nil {
			release()
			return nil, cirun.Held{}, false, err
		}
		if !taken {
			held.Devices = append(held.Devices, d)
			if held.By == "" {
				held.By = l.holder(ns+DeviceFile(d), "another process")
			}
			continue
		}
		files = append(files, f)
	}
	switch {
	case !hostTaken && len(held.Devices) == 0 && whole:
		held = cirun.Held{Devices: devs, By: "a shared lease of " + hostFile + " (a runner's job on part of the host)"}
	case !hostTaken && len(held.Devices) == 0:
		held = cirun.Held{Devices: devs, By: l.holder(hostFile, "a lease of the whole host")}
	}
	if len(held.Devices) > 0 {
		release()
		return nil, held, false, nil
	}
	rec := fmt.Sprintf("pid %d (%s) since %s\n", os.Getpid(), l.Who, l.now().Format("15:04:05"))
	for i, f := range files {
		// Only a holder writes its record, after taking the lock; the host's
		// file holds one only while it is held whole.
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
// a runner's job hook that runs as another user takes the same locks. A
// folder that is there already must be one no other user can empty: sticky
// and open to all, or this user's own and closed to others (checkDir).
func (l *Lock) makeDir() error {
	if _, err := os.Lstat(l.Dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(l.Dir), 0o755); err != nil {
			return fmt.Errorf("cannot make the lock folder %s: %v; give another with --lock-dir", l.Dir, err)
		}
		if err := os.Mkdir(l.Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot make the lock folder %s: %v; give another with --lock-dir", l.Dir, err)
		} else if err == nil {
			os.Chmod(l.Dir, 0o777|os.ModeSticky)
		}
	}
	return checkDir(l.Dir)
}

// checkDir refuses a lock folder this process cannot trust or use: one
// that is not a folder (a symbolic link is refused: whoever owns it could
// point it elsewhere), one other users may write without the sticky bit
// (another user could remove a held lock file, and a second lease of its
// device would succeed), another user's that is closed to others, and one
// this process may not write (a read-only file system, or no permission).
func checkDir(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("cannot use the lock folder %s: %v; give another with --lock-dir", dir, err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("the lock folder %s is a symbolic link, whose owner could point it elsewhere; give the folder itself with --lock-dir", dir)
	}
	if !info.IsDir() {
		return fmt.Errorf("the lock folder %s is not a folder; remove it, or give another with --lock-dir", dir)
	}
	mode := info.Mode()
	owner := -1
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		owner = int(st.Uid)
	}
	shared := mode&0o002 != 0 && mode&os.ModeSticky != 0
	private := owner == os.Geteuid() && mode&0o022 == 0
	switch {
	case mode&0o022 != 0 && mode&os.ModeSticky == 0:
		return fmt.Errorf("the lock folder %s may be written by other users but has no sticky bit (mode %04o), so another user could remove a held lock file and lease its GPU again; make it sticky (chmod 1777 %s), or give a folder of your own with --lock-dir", dir, octal(mode), dir)
	case !shared && !private:
		return fmt.Errorf("the lock folder %s belongs to user %d and is not open to all (mode %04o): a lock every user honours lives in a sticky folder open to all; ask its owner to chmod 1777 %s, or give a folder of your own with --lock-dir", dir, owner, octal(mode), dir)
	}
	switch err := syscall.Access(dir, 2 /* W_OK */); {
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("the lock folder %s is on a read-only file system; give a writable one with --lock-dir", dir)
	case err != nil:
		return fmt.Errorf("the lock folder %s is read-only for this process (user %d): %v; give one it may write with --lock-dir", dir, os.Geteuid(), err)
	}
	return nil
}

// lock opens a lock file and tries to flock it; taken false when another
// holds it. A file that is there already must be a regular file: a FIFO
// (whose open would block), a folder or a symbolic link planted as
// gpu-N.lock is refused, naming it.
func (l *Lock) lock(name string, mode int) (*os.File, bool, error) {
	path := filepath.Join(l.Dir, name)
	if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
		return nil, false, fmt.Errorf("the lock file %s %s as a lock file miles-ci makes is; remove it (rm -r %s), and ask who put it there", path, fsinput.NotRegular(info.Mode()), path)
	}
	flags := syscall.O_NOFOLLOW | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|flags, 0o666)
	first := err
	if errors.Is(err, os.ErrPermission) {
		// Another user's lock file: flock needs no write access, only
		// the record does.
		f, err = os.OpenFile(path, os.O_RDONLY|flags, 0)
	}
	switch {
	case errors.Is(first, syscall.EROFS) || errors.Is(first, os.ErrPermission) && errors.Is(err, fs.ErrNotExist):
		return nil, false, fmt.Errorf("cannot make the lock file %s: the lock folder is read-only for this process (%v); give one it may write with --lock-dir", path, first)
	case err != nil:
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

// octal is a folder's mode as chmod writes it: 1777, 0755.
func octal(m fs.FileMode) uint32 {
	o := uint32(m.Perm())
	if m&os.ModeSticky != 0 {
		o |= 0o1000
	}
	return o
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
