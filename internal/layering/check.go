package layering

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// ModulePath is the module's import path.
const ModulePath = "github.com/radixark/miles-ci"

// pkg is one package of go list's answer.
type pkg struct {
	path    string   // import path
	module  string   // module path, "" for the standard library
	imports []string // imports of the package's non-test files
}

// Check holds the module in dir to layers and to the rules beside it
// (DaggerUsers, Domain, ModuleOmits): it returns one message per broken rule, sorted, and
// an error with go list's own output when the module's packages cannot be
// listed (an import cycle, a missing package).
//
// It first reads the module's Go files and folders itself, so that a test
// calling it is cached only until one of them changes: go test keys its cache
// on what the test process opens, and go list runs in another process.
func Check(dir string, layers map[string]int) ([]string, error) {
	if err := touchSources(dir); err != nil {
		return nil, err
	}
	pkgs, err := list(dir)
	if err != nil {
		return nil, err
	}
	return check(pkgs, layers), nil
}

// touchSources opens every folder and stats every Go file, go.mod and go.sum
// of the module in dir (not testdata/, hidden folders or nested modules, which
// go list skips too).
func touchSources(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == dir {
				return nil
			}
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum" {
			_, err := os.Stat(path)
			return err
		}
		return nil
	})
}

// list runs go list over the module in dir and returns its packages and
// everything they depend on.
func list(dir string) ([]pkg, error) {
	cmd := exec.Command("go", "list", "-deps", "-f",
		`{{.ImportPath}}{{"\t"}}{{with .Module}}{{.Path}}{{end}}{{"\t"}}{{join .Imports " "}}`, "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps ./... in %s: %w\n%s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []pkg
	for line := range strings.Lines(string(out)) {
		fields := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(fields) != 3 {
			return nil, errors.New("go list printed an unexpected line: " + line)
		}
		pkgs = append(pkgs, pkg{path: fields[0], module: fields[1], imports: strings.Fields(fields[2])})
	}
	return pkgs, nil
}

// rel is a module package's path in the module ("." for the root), or ""
// for a package of another module or the standard library.
func rel(importPath string) string {
	if importPath == ModulePath {
		return "."
	}
	if r, ok := strings.CutPrefix(importPath, ModulePath+"/"); ok {
		return r
	}
	return ""
}

// isDaggerSDK says whether an import is a Dagger SDK: the standalone
// dagger.io/dagger, the module's generated internal/dagger, or a package of
// the Dagger project they are built on.
func isDaggerSDK(importPath string) bool {
	return importPath == "dagger.io/dagger" || strings.HasPrefix(importPath, "dagger.io/dagger/") ||
		strings.HasPrefix(importPath, "github.com/dagger/") || importPath == ModulePath+"/internal/dagger"
}

func check(pkgs []pkg, layers map[string]int) []string {
	var msgs []string
	graph := map[string][]string{}
	seen := map[string]bool{}
	for _, p := range pkgs {
		graph[p.path] = p.imports
		r := rel(p.path)
		if r == "" || p.module != ModulePath {
			continue
		}
		seen[r] = true
		layer, ok := layers[r]
		if !ok {
			msgs = append(msgs, fmt.Sprintf("%s is not in layering.Layers: add it there with its layer (internal/layering/layers.go) and to the table of docs/architecture.md", r))
			continue
		}
		for _, imp := range p.imports {
			if isDaggerSDK(imp) && !slices.Contains(DaggerUsers, r) {
				msgs = append(msgs, fmt.Sprintf("%s imports %s: only %s import a Dagger SDK; others reach a container through stagerun.Container", r, imp, strings.Join(DaggerUsers, ", ")))
			}
			ir := rel(imp)
			if ir == "" {
				continue
			}
			if strings.HasPrefix(r, "internal/") {
				msgs = append(msgs, fmt.Sprintf("%s imports %s: a package under internal/ is a leaf and imports no package of miles-ci", r, ir))
			} else if l, ok := layers[ir]; ok && l >= layer {
				msgs = append(msgs, fmt.Sprintf("%s (layer %d) imports %s (layer %d): imports point only to a lower layer (layering.Layers)", r, layer, ir, l))
			}
		}
	}
	for _, d := range Domain {
		if _, ok := graph[importPath(d)]; !ok {
			msgs = append(msgs, fmt.Sprintf("layering.Domain names %s, which is not a package of the module: remove it", d))
			continue
		}
		for _, f := range DomainForbidden {
			if via := chain(graph, importPath(d), is(f), true); via != nil {
				msgs = append(msgs, fmt.Sprintf("%s depends on %s (%s): a domain package runs no process and reaches no network (layering.Domain)", d, f, strings.Join(via, " -> ")))
				break
			}
		}
	}
	for _, f := range ModuleOmits {
		if via := chain(graph, ModulePath, under(f), false); via != nil {
			msgs = append(msgs, fmt.Sprintf(". (the Dagger module) depends on %s (%s): no module function uses it; import it only from the command's packages (layering.ModuleOmits)", via[len(via)-1], strings.Join(via, " -> ")))
			break // one message: the first omitted package it reaches
		}
	}
	for _, r := range slices.Sorted(maps.Keys(layers)) {
		if !seen[r] {
			msgs = append(msgs, fmt.Sprintf("layering.Layers names %s, which is not a package of the module: remove its row", r))
		}
	}
	slices.Sort(msgs)
	return msgs
}

// importPath is the import path of a package of the module.
func importPath(rel string) string {
	if rel == "." {
		return ModulePath
	}
	return ModulePath + "/" + rel
}

// is matches one package; under matches a package and every package under it.
func is(path string) func(string) bool {
	return func(p string) bool { return p == path }
}

func under(path string) func(string) bool {
	return func(p string) bool { return p == path || strings.HasPrefix(p, path+"/") }
}

// chain returns the shortest import chain from a package to a forbidden one
// (from first, to last; the module's packages by their path in it), or nil
// when there is none. With domain, it does not go through another Domain
// package or a Dagger SDK: their own rules report them, once.
func chain(graph map[string][]string, from string, to func(string) bool, domain bool) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if to(p) {
			var out []string
			for ; p != ""; p = prev[p] {
				if r := rel(p); r != "" {
					out = append(out, r)
				} else {
					out = append(out, p)
				}
			}
			slices.Reverse(out)
			return out
		}
		if domain && p != from && (slices.Contains(Domain, rel(p)) || isDaggerSDK(p)) {
			continue
		}
		for _, imp := range graph[p] {
			if _, ok := prev[imp]; !ok {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return nil
}
