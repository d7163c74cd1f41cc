// Package fsinput opens what outside input names on the file system: the
// files a flag, an environment variable or a checkout's test tree points at,
// and the folders a command works in.
//
// A file is read only when it is a regular file (a symlink is followed, but
// its target must be regular too), and never beyond the size limit of its
// kind, so no input can block the reader (a FIFO, a socket, a terminal) or
// exhaust its memory (/dev/zero, a huge file). The file is checked before it
// is opened, and opened without blocking, so even a FIFO swapped in between
// cannot hang the caller. A folder must exist and hold the entry that makes it
// what the caller expects (tests/ for a Miles checkout, .git for a git one).
//
// Every error is an *Error naming the path, what is wrong with it, and for a
// file that is too big, its real size and the limit.
package fsinput

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
)

// Kind is what a file is, with the largest size its reader accepts.
type Kind struct {
	// Name says what the file is, in errors: "a test file".
	Name string
	// Max is the largest size in bytes.
	Max int64
	// NoLink refuses a symbolic link where it is followed otherwise: a
	// file miles-ci wrote itself (a results folder's) is never one, so a
	// link there is a planted one.
	NoLink bool
}

// The kinds of file miles-ci reads, with their limits (README, "Bounded reads").
var (
	// TestFile is a Python test file of the registry. The largest test file of
	// Miles is under 100 KiB; 4 MiB leaves room without letting a generated
	// blob or a link to a device slow every plan down.
	TestFile = Kind{Name: "a test file", Max: 4 << 20}
	// PRBody is a pull request description; GitHub caps one at 65536
	// characters, at most 4 bytes each in UTF-8.
	PRBody = Kind{Name: "a PR body file", Max: 1 << 20}
	// Lockfile is release-lock.json; a real one is under 1 KiB.
	Lockfile = Kind{Name: "a lockfile", Max: 64 << 10}
	// ChangedFiles is `git diff --name-status -z -M` output; 16 MiB holds the
	// names of 100,000 files of 160 bytes.
	ChangedFiles = Kind{Name: "a changed-files diff", Max: 16 << 20}
	// EventPayload is a GitHub Actions event payload (GITHUB_EVENT_PATH); a
	// pull_request payload is tens of KiB (github.MaxEventSize is the cap).
	EventPayload = Kind{Name: "an event payload", Max: 8 << 20}
	// TableFile is a file a CI table is read from (tests/ci/*.py,
	// .github/workflows/*.yml); Miles' are a few KiB.
	TableFile = Kind{Name: "a CI table file", Max: 4 << 20}
	// Patch is the ROCm Megatron-LM patch given to git apply; the real one is
	// a few KiB.
	Patch = Kind{Name: "a patch", Max: 16 << 20}
	// HostsFile is a --hosts file: a fleet of a few dozen hosts.
	HostsFile = Kind{Name: "a hosts file", Max: 1 << 20}
)

// Error is a file or folder that cannot be used as its caller needs.
type Error struct {
	// Path is the file or folder, as the caller named it.
	Path string
	// Problem says what is wrong, after the path: "does not exist",
	// "is a named pipe (FIFO), not a regular file".
	Problem string
	// Err is the underlying error, if any (fs.ErrNotExist matches with errors.Is).
	Err error
}

func (e *Error) Error() string { return e.Path + " " + e.Problem }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// statError turns a failed stat or open into an *Error.
func statError(path string, err error) *Error {
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Path: path, Problem: "does not exist", Err: err}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{Path: path, Problem: "cannot be read: " + err.Error(), Err: err}
}

// NotRegular names the type of a file that is not a regular file, or ""
// (as "is a folder, not a regular file"); the host lock names a planted
// lock file with it too.
func NotRegular(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return ""
	case mode&fs.ModeSymlink != 0:
		return "is a symbolic link, not a regular file"
	case mode.IsDir():
		return "is a folder, not a regular file"
	case mode&fs.ModeNamedPipe != 0:
		return "is a named pipe (FIFO), not a regular file"
	case mode&fs.ModeSocket != 0:
		return "is a socket, not a regular file"
	case mode&fs.ModeDevice != 0:
		return "is a device, not a regular file"
	}
	return "is not a regular file"
}

// humanSize renders a limit: "4 MiB (4194304 bytes)".
func humanSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB (%d bytes)", n>>20, n)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB (%d bytes)", n>>10, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

// tooBig is the error of a file over its kind's limit; size is its real size.
func (k Kind) tooBig(path string, size int64) *Error {
	return &Error{Path: path, Problem: fmt.Sprintf("is %d bytes, more than the %s %s may be", size, humanSize(k.Max), k.Name)}
}

// check is Stat's test on an already known FileInfo.
func (k Kind) check(path string, info fs.FileInfo) error {
	if p := NotRegular(info.Mode()); p != "" {
		return &Error{Path: path, Problem: p}
	}
	if info.Size() > k.Max {
		return k.tooBig(path, info.Size())
	}
	return nil
}

// Stat checks, without opening it, that path is a regular file (after
// symlinks) no bigger than k allows: for a file another program reads.
func Stat(path string, k Kind) (fs.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, statError(path, err)
	}
	if err := k.check(path, info); err != nil {
		return nil, err
	}
	return info, nil
}

// ReadFile reads the whole file at path as k allows.
func ReadFile(path string, k Kind) ([]byte, error) {
	var buf []byte
	return ReadInto(path, k, &buf)
}

// ReadInto reads the whole file at path as k allows into *buf, which it grows
// as needed and which the caller may reuse for the next file: the returned
// slice aliases *buf.
func ReadInto(path string, k Kind, buf *[]byte) ([]byte, error) {
	observe(path)
	if k.NoLink {
		if info, err := os.Lstat(path); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return nil, &Error{Path: path, Problem: "is a symbolic link, which is not followed here: " + k.Name + " is never one"}
		}
	}
	if _, err := Stat(path, k); err != nil {
		return nil, err
	}
	return readOpen(path, k, buf)
}

// ReadListedInto is ReadInto for a file a folder listing has just shown
// (os.ReadDir), with the type the listing gave it: the listing is the check
// before the open, so a regular file costs no stat of its path. Any other
// type (a symbolic link, say) is checked as ReadInto checks it. The opened
// file is checked in every case, as ReadInto checks it.
func ReadListedInto(path string, listed fs.FileMode, k Kind, buf *[]byte) ([]byte, error) {
	if !listed.IsRegular() {
		return ReadInto(path, k, buf)
	}
	observe(path)
	return readOpen(path, k, buf)
}

// observer, when set, is told the path of every file a read is asked for.
var observer atomic.Pointer[func(path string)]

// ObserveReads tells fn the path of every file a read is asked for (found or
// not) until stop is called: the tests that hold a run to one read of each
// file count them with it.
func ObserveReads(fn func(path string)) (stop func()) {
	observer.Store(&fn)
	return func() { observer.Store(nil) }
}

func observe(path string) {
	if fn := observer.Load(); fn != nil {
		(*fn)(path)
	}
}

// readOpen opens path without blocking, checks the file it opened against k
// and reads it whole into *buf (see ReadInto).
func readOpen(path string, k Kind, buf *[]byte) ([]byte, error) {
	f, err := openRead(path, k.NoLink)
	if err != nil {
		if k.NoLink && errors.Is(err, syscall.ELOOP) {
			return nil, &Error{Path: path, Problem: "is a symbolic link, which is not followed here: " + k.Name + " is never one", Err: err}
		}
		return nil, statError(path, err)
	}
	defer f.close()
	// Check the file that was opened, not the one that was looked at.
	mode, size, err := f.stat()
	if err != nil {
		return nil, statError(path, err)
	}
	if p := NotRegular(mode); p != "" {
		return nil, &Error{Path: path, Problem: p}
	}
	if size > k.Max {
		return nil, k.tooBig(path, size)
	}
	need := int(size) + 512
	if int64(need) > k.Max+1 {
		need = int(k.Max) + 1
	}
	if cap(*buf) < need {
		*buf = make([]byte, 0, need)
	}
	b := (*buf)[:0]
	for {
		n, err := f.read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > k.Max {
			// The file grew while it was read (or its size was not known).
			size := int64(len(b))
			if _, now, err := f.stat(); err == nil && now > size {
				size = now
			}
			*buf = b
			return nil, k.tooBig(path, size)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, statError(path, err)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow: the file is longer than it said
		}
	}
	*buf = b
	return b, nil
}

// FolderName names a folder in messages as a user sees it: "" and "." are
// "the current folder (/abs/path)", any other path is itself.
func FolderName(path string) string {
	if path != "" && path != "." {
		return path
	}
	name := "the current folder"
	if abs, err := filepath.Abs("."); err == nil {
		name += " (" + abs + ")"
	}
	return name
}

// Folder checks that path is an existing folder (after symlinks) holding
// marker, the entry that makes it a what (e.g. "tests/" for "a Miles
// checkout"; a trailing '/' means the entry must be a folder). path "" is the
// current folder, as everywhere else.
func Folder(path, marker, what string) error {
	dir := path
	if dir == "" {
		dir = "."
	}
	path = FolderName(path)
	info, err := os.Stat(dir)
	if err != nil {
		e := statError(path, err)
		e.Problem += ": not " + what
		return e
	}
	if !info.IsDir() {
		return &Error{Path: path, Problem: "is not a folder: not " + what}
	}
	name, wantDir := strings.CutSuffix(marker, "/")
	info, err = os.Stat(filepath.Join(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist) && wantDir:
		return &Error{Path: path, Problem: "has no " + marker + " folder: not " + what, Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Path: path, Problem: "has no " + marker + ": not " + what, Err: err}
	case err != nil:
		return &Error{Path: path, Problem: "has a " + marker + " that cannot be read (" + statError(name, err).Problem + "): not " + what, Err: err}
	case wantDir && !info.IsDir():
		return &Error{Path: path, Problem: "has a " + name + " that is not a folder: not " + what}
	}
	return nil
}

// Append appends text to the file at path (a step's $GITHUB_OUTPUT or
// $GITHUB_STEP_SUMMARY), creating it when missing. The open never waits: a
// FIFO that nothing reads is an error at once, not a hung step. A terminal or
// a pipe that is read (/dev/stdout) is written as usual.
func Append(path, text string) error {
	f, err := openAppendNoBlock(path)
	if noReader(err) {
		return &Error{Path: path, Problem: "is a named pipe (FIFO) that nothing reads", Err: err}
	}
	if err != nil {
		return cannotWrite(path, err)
	}
	if _, err := io.WriteString(f, text); err != nil {
		f.Close()
		return cannotWrite(path, err)
	}
	if err := f.Close(); err != nil {
		return cannotWrite(path, err)
	}
	return nil
}

// cannotWrite is the error of a failed open, write or close for writing.
func cannotWrite(path string, err error) *Error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{Path: path, Problem: "cannot be written: " + err.Error(), Err: err}
}

// WriteFile writes data to path, a new file or a regular one it replaces,
// and never through a symbolic link (a link planted where an output goes
// would write wherever it points): a link, a folder, a FIFO or a device at
// path is an error naming it.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
		if info.Mode()&fs.ModeSymlink != 0 {
			return &Error{Path: path, Problem: "is a symbolic link; miles-ci writes no file through one: give the path of a file"}
		}
		return &Error{Path: path, Problem: NotRegular(info.Mode()) + "; give the path of a file"}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|noFollow, perm)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return &Error{Path: path, Problem: "is a symbolic link; miles-ci writes no file through one: give the path of a file", Err: err}
		}
		return cannotWrite(path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return cannotWrite(path, err)
	}
	return nil
}

// WriteSynced writes data to a new or truncated file at path and syncs
// it, so that a full disk is an error here, not a short file found later.
func WriteSynced(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
