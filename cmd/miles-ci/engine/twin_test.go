package engine

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// moduleOnly are the differences the module's adapter (adapter.go at the
// root, on its generated internal/dagger) may have from this one (on
// dagger.io/dagger), per function: the module reaches its engine through the
// global dag, this package through the session's client.
var moduleOnly = map[string][2]string{
	"WithMountedCache": {"dag.CacheVolume(key)", "x.s.client.CacheVolume(key)"},
}

// TestAdaptersInStep holds the two pipeline.Container adapters in step: the
// Go compiler checks that both have the interface's methods, this test that
// each method (and explain) does the same in both, as text, but for the
// differences moduleOnly lists. A change to one adapter is made to both.
func TestAdaptersInStep(t *testing.T) {
	module := adapterFuncs(t, filepath.Join("..", "..", "..", "adapter.go"))
	engine := adapterFuncs(t, "engine.go")
	for name, diff := range moduleOnly {
		body, ok := module[name]
		if !ok || !strings.Contains(body, diff[0]) {
			t.Errorf("adapter.go's %s has no %q: remove its row from moduleOnly", name, diff[0])
			continue
		}
		module[name] = strings.ReplaceAll(body, diff[0], diff[1])
	}
	for _, name := range slices.Sorted(maps.Keys(module)) {
		if _, ok := engine[name]; !ok {
			t.Errorf("adapter.go has %s, cmd/miles-ci/engine/engine.go has not: add it there", name)
		} else if module[name] != engine[name] {
			t.Errorf("%s differs between adapter.go and cmd/miles-ci/engine/engine.go: make the same change to both\nadapter.go:\n%s\nengine.go:\n%s", name, module[name], engine[name])
		}
	}
	for _, name := range slices.Sorted(maps.Keys(engine)) {
		if _, ok := module[name]; !ok {
			t.Errorf("cmd/miles-ci/engine/engine.go has %s, adapter.go has not: add it there", name)
		}
	}
	if len(engine) < 20 {
		t.Errorf("wanted the twenty-odd methods of ctr in engine.go, got %d: has the adapter moved?", len(engine))
	}
}

// adapterFuncs returns the methods of ctr in a file and its explain function,
// each printed as Go.
func adapterFuncs(t *testing.T, path string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]string{}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		if fn.Recv == nil && fn.Name.Name != "explain" {
			continue
		}
		if fn.Recv != nil {
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); !ok || id.Name != "ctr" {
				continue
			}
		}
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, fn); err != nil {
			t.Fatal(err)
		}
		funcs[fn.Name.Name] = b.String()
	}
	return funcs
}
