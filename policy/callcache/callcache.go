// Package callcache keeps the top-level registration calls of a checkout's
// test files from one run of miles-ci to the next, by the SHA-256 of each
// file's text: a plan then reads every test file, as it must to know it is
// unchanged, but parses again only the files that changed. Parsing is most
// of a plan's cost (docs/python.md), reading the files is the floor.
//
// The cache holds only what parsing a file's text gives (its calls), never
// a verdict: the registrations are made from the calls, under the tables
// of the run, every time, and a file that does not parse is not kept (it is
// parsed again, and fails again, with the same message). An entry is found
// only by the hash of the very text just read, so a changed file can never
// be answered from the cache; a cache written by another build of miles-ci
// (another Identity) is not read at all. A cache that cannot be read or
// written is as if there were none: it never turns into an error.
package callcache

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/policy/pysource"
)

// Sum is the SHA-256 of a test file's text.
type Sum = [sha256.Size]byte

// Cache is the cache of one checkout for one scan of its test files, safe
// for concurrent use by the scan's workers.
type Cache struct {
	path, id string
	mu       sync.Mutex
	entries  map[Sum]*entry
	loaded   int  // entries read from the file
	added    bool // an entry was kept that the file did not have
}

// entry is a file's calls: encoded as the cache file holds them, and
// decoded once a scan finds the file.
type entry struct {
	body    string
	decode  sync.Once
	calls   []pysource.Call
	badBody bool
	used    bool // guarded by Cache.mu
}

// fileKind bounds the cache file read: a Miles checkout's is tens of KiB.
var fileKind = fsinput.Kind{Name: "a call cache file", Max: 16 << 20}

// maxFiles is how many checkouts' caches dir keeps: writing one more
// removes the least recently written (a clone in a temporary folder, a
// test's tree) beyond it.
const maxFiles = 64

// Open returns the cache of the checkout at root, kept in dir (one file a
// checkout, named by the SHA-256 of root's absolute path) for the program
// identity id (see Identity): entries another identity wrote are dropped.
func Open(dir, root, id string) *Cache {
	c := &Cache{id: id, entries: map[Sum]*entry{}}
	abs, err := filepath.Abs(root)
	if err != nil || dir == "" || id == "" {
		return c // no file: Done writes nothing
	}
	name := sha256.Sum256([]byte(abs))
	c.path = filepath.Join(dir, hex.EncodeToString(name[:12]))
	data, err := fsinput.ReadFile(c.path, fileKind)
	if err != nil {
		return c
	}
	entries, err := decodeIndex(string(data), id)
	if err != nil {
		return c // another build's, or damaged: rewritten by Done
	}
	c.entries, c.loaded = entries, len(entries)
	return c
}

// Calls returns the calls kept for a file whose text has the hash sum; the
// caller must not change them.
func (c *Cache) Calls(sum Sum) ([]pysource.Call, bool) {
	c.mu.Lock()
	e, ok := c.entries[sum]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	calls, ok := e.get()
	if !ok {
		return nil, false // parsed again, and kept again by Keep
	}
	c.mu.Lock()
	e.used = true
	c.mu.Unlock()
	return calls, true
}

// get decodes the entry's calls the first time it is asked, by the worker
// that found the file and outside the cache's lock; false for a body that
// does not decode.
func (e *entry) get() ([]pysource.Call, bool) {
	e.decode.Do(func() {
		var err error
		e.calls, err = decodeCalls(e.body)
		e.badBody = err != nil
	})
	return e.calls, !e.badBody
}

// Keep records the calls of a file whose text has the hash sum; the cache
// keeps calls as they are, so they must point into no buffer that is reused.
func (c *Cache) Keep(sum Sum, calls []pysource.Call) {
	c.mu.Lock()
	old, ok := c.entries[sum]
	c.mu.Unlock()
	if ok {
		if _, good := old.get(); good {
			c.mu.Lock()
			old.used = true
			c.mu.Unlock()
			return
		}
	}
	e := &entry{body: string(appendCalls(nil, calls)), calls: calls, used: true}
	e.decode.Do(func() {})
	c.mu.Lock()
	c.entries[sum] = e
	c.added = true
	c.mu.Unlock()
}

// Done ends the scan: when it found files the cache did not have, or no
// longer found some it had, the cache file is rewritten with the entries of
// this scan only (so it holds one tree's files, whatever its history).
func (c *Cache) Done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sums []Sum
	for s, e := range c.entries {
		if e.used {
			sums = append(sums, s)
		}
	}
	if c.path == "" || (!c.added && len(sums) == c.loaded) {
		return
	}
	slices.SortFunc(sums, func(a, b Sum) int { return bytes.Compare(a[:], b[:]) })
	records := make([]record, len(sums))
	for i, s := range sums {
		records[i] = record{s, c.entries[s].body}
	}
	_ = write(c.path, encode(c.id, records))
}

// write replaces the file at path with data, through a temporary file in its
// folder (a concurrent reader sees the old file or the new one, never part
// of one), and trims the folder to maxFiles caches.
func write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	trim(dir)
	return nil
}

// trim removes the least recently written caches of dir beyond maxFiles.
func trim(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil || len(des) <= maxFiles {
		return
	}
	type aged struct {
		name string
		mod  int64
	}
	var files []aged
	for _, de := range des {
		if info, err := de.Info(); err == nil && info.Mode().IsRegular() {
			files = append(files, aged{de.Name(), info.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(files, func(a, b aged) int { return cmp.Compare(b.mod, a.mod) })
	for _, f := range files[min(maxFiles, len(files)):] {
		os.Remove(filepath.Join(dir, f.name))
	}
}

// Identity names the running executable as the file system has it: its
// path, size, modification time and inode. A rebuilt or reinstalled
// miles-ci is a new file (go build and go install write a new one), so its
// parser never reads the calls an older parser kept; "" (no cache) when the
// executable cannot be found.
func Identity() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	info, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return identityOf(exe, info)
}

func identityOf(exe string, info fs.FileInfo) string {
	var ino uint64
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	b := appendString(nil, exe)
	b = appendUvarint(b, uint64(info.Size()))
	b = appendUvarint(b, uint64(info.ModTime().UnixNano()))
	b = appendUvarint(b, ino)
	return string(b)
}

// errFormat is a cache file that is not one this program wrote.
var errFormat = errors.New("not a call cache of this miles-ci")

// Opener is how the CLI opens a checkout's cache: in the user's cache folder
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux), under
// miles-ci/calls, for this executable's Identity. It is nil, no cache, when
// MILES_CI_CALL_CACHE is "off" or there is no such folder or identity.
func Opener(getenv func(string) string) func(root string) *Cache {
	if getenv("MILES_CI_CALL_CACHE") == "off" {
		return nil
	}
	base, err := os.UserCacheDir()
	id := Identity()
	if err != nil || id == "" {
		return nil
	}
	dir := filepath.Join(base, "miles-ci", "calls")
	return func(root string) *Cache { return Open(dir, root, id) }
}
