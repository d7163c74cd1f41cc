package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/policy/pysource"
)

// DiscoveryRoots are the folders (relative to the repository) searched for test files.
var DiscoveryRoots = []string{"tests/fast", "tests/fast-gpu", "tests/e2e", "tests/ci"}

// implicitRoot is where a file without a registration is registered by convention.
const implicitRoot = "tests/fast/"

// CheckoutError is a folder given as a Miles checkout that is not one.
type CheckoutError struct {
	// Path is the folder, as given ("the current folder (...)" for "" or ".").
	Path string
	// Problem says what is missing: "does not exist: not a Miles checkout",
	// "is not a folder: ...", "has no tests/ folder: ...".
	Problem string
}

func (e *CheckoutError) Error() string {
	return e.Path + " " + e.Problem + "; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it"
}

// CheckCheckout checks that root is a Miles checkout: an existing folder with
// a tests/ folder. It returns the cleaned folder ("" and "." are the current
// folder, "."), or a *CheckoutError naming the path and what is missing.
// LoadRegistry calls it, so no caller can read an empty registry from a
// mistyped path and report that nothing runs.
func CheckCheckout(root string) (string, error) {
	if err := fsinput.Folder(root, "tests/", "a Miles checkout"); err != nil {
		var fe *fsinput.Error
		if errors.As(err, &fe) {
			return "", &CheckoutError{Path: fe.Path, Problem: fe.Problem}
		}
		return "", err
	}
	return filepath.Clean(root), nil
}

// Registry is every registration of a repository, in discovery order.
type Registry struct {
	// Root is the checkout the registry was read from, cleaned ("." for the
	// current folder).
	Root string
	// Tables are the CI tables that apply to the repository: its own where it
	// holds them, else the built-in ones (see Tables.Origins).
	Tables *Tables
	// Files are the discovered test files, repo-relative, sorted by byte value.
	Files []string
	// Registrations keep file order, then call order within a file.
	Registrations []Registration
}

// Discover lists every test_*.py below the discovery roots of the Miles
// checkout at root (see CheckCheckout): recursive, skipping folders whose name
// starts with '.', as repo-relative '/' paths sorted by byte value (Python's
// glob + sorted).
func Discover(root string) ([]string, error) {
	dir, err := CheckCheckout(root)
	if err != nil {
		return nil, err
	}
	files, _, err := discover(dir)
	return files, err
}

// discover lists the test files below root (see Discover), each with the
// type its folder listing gave it (0 for a regular file, fs.ModeSymlink
// for a link), so that reading one needs no stat of its path.
func discover(root string) ([]string, []fs.FileMode, error) {
	var found []listedFile
	if err := walkRoots(root, func(f listedFile) { found = append(found, f) }); err != nil {
		return nil, nil, err
	}
	sortListed(found)
	files, types := make([]string, len(found)), make([]fs.FileMode, len(found))
	for i, f := range found {
		files[i], types[i] = f.rel, f.typ
	}
	return files, types, nil
}

// walkRoots hands each test file below the discovery roots of root to found,
// in walk order (sortListed gives discovery's order).
func walkRoots(root string, found func(listedFile)) error {
	for _, r := range DiscoveryRoots {
		if err := walkTests(found, filepath.Join(root, filepath.FromSlash(r)), r, 0); err != nil {
			return err
		}
	}
	return nil
}

// sortListed sorts files by byte value of their repo-relative names.
func sortListed(files []listedFile) {
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
}

// listedFile is a test file as its folder listing showed it.
type listedFile struct {
	rel string
	typ fs.FileMode
	// scan is what reading it gave (scanRegistry).
	scan *fileScan
}

// maxSymlinkHops bounds how many symbolic links to folders one path may pass
// through. Like Python's glob, discovery follows such links; only a link can
// make a loop, and this stops one without a stat of every folder.
const maxSymlinkHops = 8

// walkTests hands to found the test files below dir, whose repo-relative
// name is rel.
func walkTests(found func(listedFile), dir, rel string, hops int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return fmt.Errorf("reading %s: %w", rel, err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		childRel := rel + "/" + name
		if IsTestFileName(name) {
			found(listedFile{rel: childRel, typ: e.Type()})
		}
		childHops := hops
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.IsDir() {
				isDir = true
				childHops++
			}
		}
		if isDir && childHops <= maxSymlinkHops {
			if err := walkTests(found, filepath.Join(dir, name), childRel, childHops); err != nil {
				return err
			}
		}
	}
	return nil
}

// IsTestFileName matches the glob pattern test_*.py of the files discovery reads.
func IsTestFileName(name string) bool {
	return strings.HasPrefix(name, "test_") && strings.HasSuffix(name, ".py") && len(name) >= len("test_.py")
}

// LoadRegistry reads the CI tables of the Miles checkout at root ("" is the
// current folder; LoadTables), then discovers and parses every test file,
// checking labels against those tables. A root that is not a Miles checkout
// is a *CheckoutError; otherwise the first fault, in file order, is returned.
//
// The tables and the test files are read at the same time: finding a
// file's calls needs no table, only checking them does, so the files are
// read and parsed while the tables are, and each file's calls are checked
// once the tables are there. The faults are those, and in the order, of
// LoadTables and then Tables.LoadRegistry.
func LoadRegistry(root string) (*Registry, error) {
	_, reg, err := LoadTablesAndRegistry(root)
	return reg, err
}

// LoadTablesAndRegistry is LoadRegistry that also returns the tables when
// they were read, even when the registry could not be: a caller says which
// tables are the built-in ones (FallbackNote) before the registry's fault.
func LoadTablesAndRegistry(root string) (*Tables, *Registry, error) {
	var tables atomic.Pointer[Tables]
	var tablesErr error
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		t, err := LoadTables(root)
		if err != nil {
			tablesErr = err
			return
		}
		tables.Store(t)
	}()
	scan := scanRegistry(root, tables.Load)
	<-loaded
	if tablesErr != nil {
		return nil, nil, tablesErr
	}
	t := tables.Load()
	reg, err := scan.registry(t)
	return t, reg, err
}

// LoadRegistry discovers and parses every test file of the Miles checkout at
// root under these tables (see CheckCheckout).
func (t *Tables) LoadRegistry(root string) (*Registry, error) {
	t = t.or()
	return scanRegistry(root, func() *Tables { return t }).registry(t)
}

// registryScan is every test file of a checkout read and parsed, each
// file's calls checked against the tables where they were there in time.
type registryScan struct {
	root string
	// checkout is a fault of the checkout itself, err one of the walk: the
	// tables' older discovery (run_suite.py, read once by LoadTables) is
	// reported between the two.
	checkout, err error
	files         []string
	scans         []fileScan
}

// fileScan is one test file read: its registrations once its calls are
// checked, or until then its calls (copied out of the read buffer) and
// whether its text mentions a registration function (see fileRegistrations).
type fileScan struct {
	regs     []Registration
	checked  bool
	calls    []pysource.Call
	mentions bool
	err      error
}

// scanRegistry reads every test file of the checkout at root (see
// CheckCheckout) while the folders are still being listed: the calling
// goroutine walks them and then reads files too, and one more worker per
// core takes each file as soon as the walk has found it. Each worker checks
// a file's calls at once when tables returns the tables, else keeps them
// for registry.
func scanRegistry(root string, tables func() *Tables) *registryScan {
	root, err := CheckCheckout(root)
	if err != nil {
		return &registryScan{checkout: err}
	}
	if t := tables(); t != nil && t.olderDiscovery != nil {
		return &registryScan{root: root} // registry says why: no file is read
	}
	w := &walk{}
	w.more.L = &w.mu
	work := func() {
		// One read buffer per worker, reused from file to file: what is kept
		// of a file is copied out of it (a fresh buffer per file costs a page
		// fault per 4 kB, which is more than reading the file).
		var buf []byte
		for {
			lf, ok := w.take()
			if !ok {
				return
			}
			f := lf.scan
			text, calls, err := readCalls(root, lf.rel, lf.typ, &buf)
			if err != nil {
				f.err = err
				continue
			}
			if t := tables(); t != nil {
				f.regs, f.err = t.fileRegistrations(lf.rel, mentionsIn(lf.rel, text, calls), calls)
				f.checked = true
				continue
			}
			f.calls, f.mentions = cloneCalls(calls), mentionsIn(lf.rel, text, calls)
		}
	}
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) - 1 {
		wg.Go(work)
	}
	err = walkRoots(root, w.add)
	w.end()
	work()
	wg.Wait()
	if err != nil {
		return &registryScan{err: err}
	}
	sortListed(w.found)
	s := &registryScan{root: root, files: make([]string, len(w.found)), scans: make([]fileScan, len(w.found))}
	for i, lf := range w.found {
		s.files[i], s.scans[i] = lf.rel, *lf.scan
	}
	return s
}

// walk is the test files found so far by a walk that workers read from
// while it runs.
type walk struct {
	mu    sync.Mutex
	more  sync.Cond // a file was found, or the walk ended
	found []listedFile
	taken int
	done  bool
}

// add records a file the walk found, for a worker to read.
func (w *walk) add(f listedFile) {
	f.scan = new(fileScan)
	w.mu.Lock()
	w.found = append(w.found, f)
	w.mu.Unlock()
	w.more.Signal()
}

// end records the end of the walk.
func (w *walk) end() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	w.more.Broadcast()
}

// take returns the next file no worker has taken, waiting while the walk
// may still find one; false once every file is taken and the walk is over.
func (w *walk) take() (listedFile, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.taken == len(w.found) && !w.done {
		w.more.Wait()
	}
	if w.taken == len(w.found) {
		return listedFile{}, false
	}
	w.taken++
	return w.found[w.taken-1], true
}

// registry checks the calls the scan kept against t and returns the
// registry, or the first fault in file order.
func (s *registryScan) registry(t *Tables) (*Registry, error) {
	if s.checkout != nil {
		return nil, s.checkout
	}
	if t.olderDiscovery != nil {
		return nil, t.olderDiscovery
	}
	if s.err != nil {
		return nil, s.err
	}
	reg := &Registry{Root: s.root, Files: s.files, Tables: t}
	for i := range s.scans {
		f := &s.scans[i]
		if f.err == nil && !f.checked {
			f.regs, f.err = t.fileRegistrations(s.files[i], f.mentions, f.calls)
		}
		if f.err != nil {
			return nil, declineForm(s.root, f.err)
		}
		reg.Registrations = append(reg.Registrations, f.regs...)
	}
	return reg, nil
}

// readCalls reads one repo-relative test file below root (of the type its
// folder listing gave it, fsinput.ReadListedInto; fs.ModeIrregular when
// unknown) into *buf, which it may grow and which the caller may reuse, and
// returns its text and its top-level registration calls. The calls point
// into *buf; registrations made from them copy what they keep
// (fileRegistrations applies the collection rules of rules §2).
func readCalls(root, rel string, listed fs.FileMode, buf *[]byte) (text string, calls []pysource.Call, err error) {
	rel = path.Clean(filepath.ToSlash(rel))
	src, err := fsinput.ReadListedInto(filepath.Join(root, filepath.FromSlash(rel)), listed, fsinput.TestFile, buf)
	if err != nil {
		var fe *fsinput.Error
		problem := err.Error()
		if errors.As(err, &fe) {
			problem = fe.Problem
		}
		return "", nil, &RegistryError{File: rel, Msg: "the test file " + problem,
			Fix: "make it a readable Python file of at most 4 MiB, or remove it"}
	}
	// The parser reads the buffer in place; registrations copy what they keep.
	if len(src) > 0 {
		text = unsafe.String(&src[0], len(src))
	}
	calls, err = registrationCalls(rel, text)
	return text, calls, err
}

// mentionsIn is whether the text of the test file rel, whose top-level
// registration calls are calls, mentions a registration function where
// fileRegistrations asks: a tests/fast/ file without a call.
func mentionsIn(rel, text string, calls []pysource.Call) bool {
	return len(calls) == 0 && strings.HasPrefix(rel, implicitRoot) && mentionsRegistration(text)
}

// cloneCalls copies calls out of the text they point into (a read buffer
// the next file reuses).
func cloneCalls(calls []pysource.Call) []pysource.Call {
	out := make([]pysource.Call, len(calls))
	for i, c := range calls {
		out[i] = pysource.Call{Func: strings.Clone(c.Func), Line: c.Line, Args: make([]pysource.Arg, len(c.Args))}
		for j, a := range c.Args {
			out[i].Args[j] = pysource.Arg{Kind: a.Kind, Keyword: strings.Clone(a.Keyword), Value: cloneExpr(a.Value), Line: a.Line}
		}
	}
	return out
}

// cloneExpr copies an argument's value; Node and Const.Type are the
// classifier's own names, only a string's value may point into the text.
func cloneExpr(e pysource.Expr) pysource.Expr {
	c := pysource.Expr{Node: e.Node}
	if e.Const != nil {
		k := *e.Const
		k.Str = strings.Clone(k.Str)
		c.Const = &k
	}
	if e.Elems != nil {
		c.Elems = make([]pysource.Expr, len(e.Elems))
		for i, el := range e.Elems {
			c.Elems[i] = cloneExpr(el)
		}
	}
	return c
}

// fileRegistrations checks the calls of the test file rel against the tables
// t and applies the collection rules of rules §2: a tests/fast/ file is
// CPU-only and registered implicitly when it has no call, unless its text
// mentions a registration function (mentionsIn); any other file without a
// registration is an error.
func (t *Tables) fileRegistrations(rel string, mentions bool, calls []pysource.Call) ([]Registration, error) {
	regs, err := t.or().callRegistrations(rel, calls)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(rel, implicitRoot) {
		for _, r := range regs {
			if r.Backend != CPU {
				fn := "register_" + string(r.Backend) + "_ci"
				return nil, &RegistryError{File: rel, Line: r.Line,
					Msg: fmt.Sprintf("%s is forbidden in tests/fast/; move the file to tests/fast-gpu/ instead", fn)}
			}
		}
		if len(regs) == 0 {
			if mentions {
				return nil, &RegistryError{File: rel,
					Msg: "file mentions register_cpu_ci or register_cuda_ci textually but no top-level call was parsed; check for aliased import, non-toplevel call, or attribute access",
					Fix: "call register_cpu_ci(...) by its bare name at the top level of the module, or remove the mention"}
			}
			return []Registration{{File: rel, Backend: CPU, EstTime: 1, Suite: "stage-a-cpu", Labels: []string{}, Implicit: true}}, nil
		}
	}
	if len(regs) == 0 {
		return nil, &RegistryError{File: rel, Msg: "No CI registry found in " + rel, Fix: "add a top-level call such as " + exampleCall(rel)}
	}
	return regs, nil
}

// exampleCall suggests the registration that fits where a file lives: GPU
// tests under tests/e2e and tests/fast-gpu, CPU tests elsewhere.
func exampleCall(rel string) string {
	if strings.HasPrefix(rel, "tests/e2e/") || strings.HasPrefix(rel, "tests/fast-gpu/") {
		return `register_cuda_ci(est_time=600, suite="stage-c-2-gpu-h200", labels=["megatron"])`
	}
	return `register_cpu_ci(est_time=60, suite="stage-b-cpu")`
}

// registerPrefix is what register_cpu_ci and register_cuda_ci share;
// registerSkip is its Horspool shift table: how far the window may move when
// its last byte is c.
const registerPrefix = "register_c"

var registerSkip = func() (t [256]uint8) {
	for c := range t {
		t[c] = uint8(len(registerPrefix))
	}
	for i := 0; i < len(registerPrefix)-1; i++ {
		t[registerPrefix[i]] = uint8(len(registerPrefix) - 1 - i)
	}
	return t
}()

// mentionsRegistration reports whether text contains register_cpu_ci or
// register_cuda_ci: strings.Contains of each, in one pass that looks at
// about one byte in six (most of a tests/fast/ file is read again here).
func mentionsRegistration(text string) bool {
	const m = len(registerPrefix)
	for i := m - 1; i < len(text); i += int(registerSkip[text[i]]) {
		if text[i] != 'c' || text[i-(m-1):i+1] != registerPrefix {
			continue
		}
		rest := text[i+1:]
		if strings.HasPrefix(rest, "pu_ci") || strings.HasPrefix(rest, "uda_ci") {
			return true
		}
	}
	return false
}
