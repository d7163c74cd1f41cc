package layering

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ciFlow names the one use case of the whole CI of an event: its package,
// its one entry and its request type. The front ends decode their flags or
// arguments into the request, call the entry once and print its answer;
// the flow (dry run, run, re-run, nothing to re-run, what-if, fleet or one
// host, the lock) is the use case's.
var ciFlow = struct{ pkg, entry, request string }{"usecase/ci", "CI", "CIRequest"}

// TestFrontEndsHoldNoCIFlow fails when a front end branches on the ci
// flow: it calls a function of usecase/ci other than the one entry, calls
// the entry at more than one place, or tests a field of the request in a
// condition (if, switch, &&, ||, !, == or !=) to choose a path.
func TestFrontEndsHoldNoCIFlow(t *testing.T) {
	entries := map[string]bool{}
	for _, name := range exportedFuncs(t, filepath.Join(root, ciFlow.pkg)) {
		entries[name] = true
	}
	for _, dir := range FrontEndCalls.FrontEnds {
		for _, f := range ciFlowFindings(t, filepath.Join(root, dir), entries) {
			t.Errorf("%s %s: a front end decodes its flags or arguments into ci.%s, calls ci.%s once and prints the answer; the flow is the use case's (usecase/ci)", f.pos, f.expr, ciFlow.request, ciFlow.entry)
		}
	}
}

// TestCIFlowFindingsFound is the test of the test: a second entry, a
// second call of the entry, a condition on the request and one on a flag
// the request carries are found; building the request, the flag set's
// check, one call and a condition on the answer are not.
func TestCIFlowFindingsFound(t *testing.T) {
	dir := t.TempDir()
	src := `package x

import "` + ModulePath + `/usecase/ci"

func run(dry *bool, fs *flags) int {
	fs.check(func() error { if *dry { return nil }; return nil })
	req := ci.CIRequest{DryRun: *dry}
	if !*dry {
		req.Repo = "."
	}
	ans, _ := ci.CI(nil, req)
	if ans.NothingToRerun {
		return 0
	}
	if req.Previous != nil {
		ci.Other()
	}
	return again(req)
}

func again(r ci.CIRequest) int {
	ci.CI(nil, r)
	return 0
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := ciFlowFindings(t, dir, map[string]bool{"CI": true, "Other": true})
	var text []string
	for _, f := range got {
		text = append(text, f.pos[strings.LastIndex(f.pos, "x.go"):]+" "+f.expr)
	}
	want := []string{
		"x.go:15:5 tests the request: req.Previous != nil",
		"x.go:16:3 calls ci.Other",
		"x.go:22:2 calls ci.CI again (first at x.go:11:12)",
		"x.go:8:5 tests a flag the request carries: !*dry",
	}
	slices.Sort(text)
	if strings.Join(text, "\n") != strings.Join(want, "\n") {
		t.Errorf("wanted\n%s\ngot\n%s", strings.Join(want, "\n"), strings.Join(text, "\n"))
	}
}

// ciFlowFindings lists, in the non-test files of dir, the calls of the ci
// package's functions (entries: its exported functions) other than one
// call of the entry, and the conditions that read a variable of the
// request type.
func ciFlowFindings(t *testing.T, dir string, entries map[string]bool) []finding {
	t.Helper()
	files := parseDir(t, dir)
	pkg := filepath.Base(ciFlow.pkg)
	// Functions of this package that return the request.
	makers := map[string]bool{}
	for _, pf := range files {
		for _, d := range pf.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Type.Results != nil && len(fn.Type.Results.List) > 0 && isRequestType(fn.Type.Results.List[0].Type, pkg) {
				makers[fn.Name.Name] = true
			}
		}
	}
	var out []finding
	first := ""
	for _, pf := range files {
		if !importsPkg(pf.file, ciFlow.pkg) {
			continue
		}
		reqVars := requestVars(pf.file, pkg, makers)
		ast.Inspect(pf.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != pkg || !entries[sel.Sel.Name] {
				return true
			}
			pos := pf.fset.Position(sel.Pos()).String()
			switch {
			case sel.Sel.Name != ciFlow.entry:
				out = append(out, finding{pos: pos, expr: "calls " + pkg + "." + sel.Sel.Name})
			case first == "":
				first = pos
			default:
				out = append(out, finding{pos: pos, expr: "calls " + pkg + "." + ciFlow.entry + " again (first at " + filepath.Base(first) + ")"})
			}
			return true
		})
		var end token.Pos
		for _, c := range conditions(pf.file, true) {
			if c.Pos() < end || !readsVar(c, reqVars) {
				continue
			}
			end = c.End()
			out = append(out, finding{pos: pf.fset.Position(c.Pos()).String(), expr: "tests the request: " + exprText(pf.fset, pf.name, c)})
		}
		out = append(out, flagFindings(pf, pkg, reqVars)...)
	}
	return out
}

// flagFindings are the conditions of a function that read a flag (a
// variable, or what a flag's pointer points at) the function copies as it
// is into a field of the request: the request carries it, so a test of it
// chooses a path of the flow (a dry run reads no history) outside the use
// case. The flag set's own check of which flags go together (a function
// literal handed to a method named check) is decoding, and not counted.
func flagFindings(pf parsedFile, pkg string, reqVars map[string]bool) []finding {
	var out []finding
	for _, d := range pf.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		flags := map[string]bool{}
		copied := func(e ast.Expr) {
			if st, ok := e.(*ast.StarExpr); ok {
				e = st.X
			}
			if id, ok := e.(*ast.Ident); ok && id.Name != "nil" && id.Name != "true" && id.Name != "false" {
				flags[id.Name] = true
			}
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if isRequestType(n.Type, pkg) {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							copied(kv.Value)
						}
					}
				}
			case *ast.AssignStmt:
				if len(n.Lhs) != len(n.Rhs) {
					return true
				}
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && readsVar(sel.X, reqVars) {
						copied(n.Rhs[i])
					}
				}
			}
			return true
		})
		if len(flags) == 0 {
			continue
		}
		var checks []ast.Node
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "check" {
					for _, a := range call.Args {
						if lit, ok := a.(*ast.FuncLit); ok {
							checks = append(checks, lit)
						}
					}
				}
			}
			return true
		})
		inCheck := func(e ast.Expr) bool {
			for _, c := range checks {
				if e.Pos() >= c.Pos() && e.End() <= c.End() {
					return true
				}
			}
			return false
		}
		var end token.Pos
		for _, c := range conditions(pf.file, true) {
			if c.Pos() < fn.Body.Pos() || c.End() > fn.Body.End() || c.Pos() < end || inCheck(c) || !readsVar(c, flags) {
				continue
			}
			end = c.End()
			out = append(out, finding{pos: pf.fset.Position(c.Pos()).String(), expr: "tests a flag the request carries: " + exprText(pf.fset, pf.name, c)})
		}
	}
	return out
}

// importsPkg reports a file that imports the module's package path.
func importsPkg(f *ast.File, path string) bool {
	for _, im := range f.Imports {
		if p, err := strconv.Unquote(im.Path.Value); err == nil && p == ModulePath+"/"+path {
			return true
		}
	}
	return false
}

// isRequestType reports the request type, pkg.Request or a pointer to it.
func isRequestType(e ast.Expr, pkg string) bool {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && sel.Sel.Name == ciFlow.request
}

// requestVars are the names a file binds to a request: a composite literal
// of it, a call of a maker, a var or a parameter of its type.
func requestVars(f *ast.File, pkg string, makers map[string]bool) map[string]bool {
	vars := map[string]bool{}
	isRequestValue := func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.CompositeLit:
			return isRequestType(e.Type, pkg)
		case *ast.UnaryExpr:
			if cl, ok := e.X.(*ast.CompositeLit); ok {
				return isRequestType(cl.Type, pkg)
			}
		case *ast.CallExpr:
			switch fn := e.Fun.(type) {
			case *ast.Ident:
				return makers[fn.Name]
			case *ast.SelectorExpr:
				return makers[fn.Sel.Name]
			}
		}
		return false
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Rhs) == 1 && isRequestValue(n.Rhs[0]) {
				if id, ok := n.Lhs[0].(*ast.Ident); ok {
					vars[id.Name] = true
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if (n.Type != nil && isRequestType(n.Type, pkg)) || (i < len(n.Values) && isRequestValue(n.Values[i])) {
					vars[name.Name] = true
				}
			}
		case *ast.Field:
			if isRequestType(n.Type, pkg) {
				for _, name := range n.Names {
					vars[name.Name] = true
				}
			}
		}
		return true
	})
	return vars
}

// readsVar reports an expression that reads one of vars (function literals
// left out: their bodies are inspected on their own).
func readsVar(e ast.Expr, vars map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.Ident:
			found = found || vars[n.Name]
		}
		return !found
	})
	return found
}

// TestCIUseCaseParsesNothing fails when usecase/ci calls a Parse* function:
// the graph hands it typed work and the front ends a decoded request, so
// nothing there reads a command line, an image reference or a flag's text.
func TestCIUseCaseParsesNothing(t *testing.T) {
	for _, f := range parseCalls(t, filepath.Join(root, ciFlow.pkg)) {
		t.Errorf("%s calls %s: usecase/ci takes typed work from the graph and a decoded request; parse where the input comes in (the graph, the front end's decoding)", f.pos, f.expr)
	}
}

// TestParseCallsFound is the test of the test.
func TestParseCallsFound(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nfunc a(s string) {\n\t_, _ = cirun.ParseRunSuite(s)\n\t_ = parseLocal(s)\n\t_ = Parsed(s)\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := parseCalls(t, dir)
	if len(got) != 1 || got[0].expr != "cirun.ParseRunSuite" || !strings.HasSuffix(got[0].pos, "x.go:4:9") {
		t.Errorf("wanted one call of cirun.ParseRunSuite at x.go:4:9, got %+v", got)
	}
}

// parseCalls lists the calls of a function or method named Parse or
// Parse<Something> in the non-test files of dir.
func parseCalls(t *testing.T, dir string) []finding {
	t.Helper()
	var out []finding
	for _, pf := range parseDir(t, dir) {
		ast.Inspect(pf.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			var at ast.Node = call.Fun
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
				if id, ok := fn.X.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			short := name[strings.LastIndex(name, ".")+1:]
			if short == "Parse" || (strings.HasPrefix(short, "Parse") && len(short) > 5 && short[5] >= 'A' && short[5] <= 'Z') {
				out = append(out, finding{pos: pf.fset.Position(at.Pos()).String(), expr: name})
			}
			return true
		})
	}
	return out
}
