package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// DiscoveryRoots are the folders (relative to the repository) searched for test files.
var DiscoveryRoots = []string{"tests/fast", "tests/fast-gpu", "tests/e2e", "tests/ci"}

// implicitRoot is where a file without a registration is registered by convention.
const implicitRoot = "tests/fast/"

// Registry is every registration of a repository, in discovery order.
type Registry struct {
	// Root is the repository directory the registry was read from.
	Root string
	// Tables are the CI tables that apply to the repository: its own where it
	// holds them, else the built-in ones (see Tables.Origins).
	Tables *Tables
	// Files are the discovered test files, repo-relative, sorted by byte value.
	Files []string
	// Registrations keep file order, then call order within a file.
	Registrations []Registration
}

// Discover lists every test_*.py below the discovery roots of the repository
// at root: recursive, skipping folders whose name starts with '.', as
// repo-relative '/' paths sorted by byte value (Python's glob + sorted).
func Discover(root string) ([]string, error) {
	var files []string
	for _, r := range DiscoveryRoots {
		found, err := walkTests(filepath.Join(root, filepath.FromSlash(r)), r, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	sort.Strings(files)
	return files, nil
}

// maxSymlinkHops bounds how many symbolic links to folders one path may pass
// through. Like Python's glob, discovery follows such links; only a link can
// make a loop, and this stops one without a stat of every folder.
const maxSymlinkHops = 8

// walkTests lists test files below dir, whose repo-relative name is rel.
func walkTests(dir, rel string, hops int) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		childRel := rel + "/" + name
		if isTestName(name) {
			out = append(out, childRel)
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
			sub, err := walkTests(filepath.Join(dir, name), childRel, childHops)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
	}
	return out, nil
}

// isTestName matches the glob pattern test_*.py.
func isTestName(name string) bool {
	return strings.HasPrefix(name, "test_") && strings.HasSuffix(name, ".py") && len(name) >= len("test_.py")
}

// LoadRegistry reads the CI tables of the repository at root (LoadTables),
// then discovers and parses every test file, checking labels against those
// tables. The first fault, in file order, is returned.
func LoadRegistry(root string) (*Registry, error) {
	tables, err := LoadTables(root)
	if err != nil {
		return nil, err
	}
	return tables.LoadRegistry(root)
}

// LoadRegistry discovers and parses every test file of the repository at
// root under these tables.
func (t *Tables) LoadRegistry(root string) (*Registry, error) {
	t = t.or()
	files, err := Discover(root)
	if err != nil {
		return nil, err
	}
	perFile := make([][]Registration, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // one read buffer per worker, reused file after file
			for i := range next {
				perFile[i], errs[i] = collectFile(root, files[i], &buf, t)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	reg := &Registry{Root: root, Files: files, Tables: t}
	for i := range files {
		if errs[i] != nil {
			return nil, errs[i]
		}
		reg.Registrations = append(reg.Registrations, perFile[i]...)
	}
	return reg, nil
}

// CollectFile returns the registrations of one repo-relative test file below
// root, applying the collection rules of rules §2: a tests/fast/ file is
// CPU-only and registered implicitly when it has no call; any other file
// without a registration is an error. Labels are checked against the tables
// of the checkout at root.
func CollectFile(root, rel string) ([]Registration, error) {
	t, err := LoadTables(root)
	if err != nil {
		return nil, err
	}
	return t.CollectFile(root, rel)
}

// CollectFile is the package CollectFile under these tables.
func (t *Tables) CollectFile(root, rel string) ([]Registration, error) {
	var buf []byte
	return collectFile(root, rel, &buf, t.or())
}

// collectFile is CollectFile reading into *buf, which it may grow and which
// the caller may reuse: registrations hold no reference to it.
func collectFile(root, rel string, buf *[]byte, t *Tables) ([]Registration, error) {
	rel = path.Clean(filepath.ToSlash(rel))
	src, err := readInto(filepath.Join(root, filepath.FromSlash(rel)), buf)
	if err != nil {
		return nil, &RegistryError{File: rel, Msg: "cannot read test file: " + unwrapPathError(err),
			Fix: "make it a readable Python file or remove it"}
	}
	// The parser reads the buffer in place; registrations copy what they keep.
	text := ""
	if len(src) > 0 {
		text = unsafe.String(&src[0], len(src))
	}
	regs, err := parseSource(rel, text, t)
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
			if strings.Contains(text, "register_cpu_ci") || strings.Contains(text, "register_cuda_ci") {
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

func unwrapPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// exampleCall suggests the registration that fits where a file lives: GPU
// tests under tests/e2e and tests/fast-gpu, CPU tests elsewhere.
func exampleCall(rel string) string {
	if strings.HasPrefix(rel, "tests/e2e/") || strings.HasPrefix(rel, "tests/fast-gpu/") {
		return `register_cuda_ci(est_time=600, suite="stage-c-2-gpu-h200", labels=["megatron"])`
	}
	return `register_cpu_ci(est_time=60, suite="stage-b-cpu")`
}

// readInto reads a whole file into *buf (grown as needed) and returns the bytes read.
func readInto(name string, buf *[]byte) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	if need := int(st.Size()) + 512; cap(*buf) < need {
		*buf = make([]byte, 0, need)
	}
	b := (*buf)[:0]
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow: the file is longer than it said
		}
	}
	*buf = b
	return b, nil
}
