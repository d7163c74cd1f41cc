package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// frontEnds are the module's two front ends: they map their inputs onto
// usecase's requests and hold no rule.
var frontEnds = []string{".", "cmd/miles-ci/cli"}

// TestFrontEndsWithholdNoSecret fails when a front end decides "a fork gets
// no secrets" itself: no non-test file of theirs may test a fork fact (in an
// if, a switch, or under !, &&, ||, == or !=). They pass it on to
// stagerun.HandedSecrets and usecase, which decide.
func TestFrontEndsWithholdNoSecret(t *testing.T) {
	for _, dir := range frontEnds {
		for _, f := range forkTests(t, filepath.Join(root, dir)) {
			t.Errorf("%s tests a fork fact (%s): pass it to stagerun.HandedSecrets or the usecase request, which decide what a fork's run gets", f.pos, f.expr)
		}
	}
}

// TestForkTestsFound is the test of the test: a front end's own decision is
// found, passing the fact on is not.
func TestForkTestsFound(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nfunc a(req struct{ Fork bool }, v string) bool {\n\tpass(req.Fork)\n\treturn v != \"\" && !req.Fork\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := forkTests(t, dir)
	if len(got) != 1 || got[0].expr != `v != "" && !req.Fork` || !strings.HasSuffix(got[0].pos, "x.go:5:9") {
		t.Errorf("wanted one test of the fork fact at x.go:5:9, got %+v", got)
	}
}

// finding is one place a rule is broken: its position and the expression.
type finding struct{ pos, expr string }

// forkTests lists the conditions on a fork fact (a name or field spelled
// fork, any case) in the non-test Go files of dir.
func forkTests(t *testing.T, dir string) []finding {
	t.Helper()
	var out []finding
	for _, pf := range parseDir(t, dir) {
		fset, name, f := pf.fset, pf.name, pf.file
		// Inspect meets an outer condition before the ones inside it:
		// report the outermost only.
		var end token.Pos
		for _, c := range conditions(f, false) {
			if c.Pos() < end || !mentionsFork(c) {
				continue
			}
			end = c.End()
			out = append(out, finding{pos: fset.Position(c.Pos()).String(), expr: exprText(fset, name, c)})
		}
	}
	return out
}

// conditions are the conditions of a file, outer before inner: those of
// if and switch statements (with cases, their case expressions too) and
// every !, &&, ||, == and !=.
func conditions(f *ast.File, cases bool) []ast.Expr {
	var conds []ast.Expr
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			conds = append(conds, n.Cond)
		case *ast.SwitchStmt:
			if n.Tag != nil {
				conds = append(conds, n.Tag)
			}
			for _, c := range n.Body.List {
				if cases {
					conds = append(conds, c.(*ast.CaseClause).List...)
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.NOT {
				conds = append(conds, n)
			}
		case *ast.BinaryExpr:
			switch n.Op {
			case token.LAND, token.LOR, token.EQL, token.NEQ:
				conds = append(conds, n)
			}
		}
		return true
	})
	return conds
}

// mentionsFork says whether an expression reads a fork fact, leaving out
// function literals (their bodies are inspected on their own).
func mentionsFork(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.Ident:
			if strings.EqualFold(n.Name, "fork") {
				found = true
			}
		}
		return !found
	})
	return found
}

func exprText(fset *token.FileSet, name string, e ast.Expr) string {
	data, err := os.ReadFile(name)
	if err != nil {
		return "?"
	}
	return string(data[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset])
}

// TestFrontEndsCallNoDecision holds FrontEndCalls: a front end that calls a
// function of policy or deps decides something itself, instead of through a
// usecase request.
func TestFrontEndsCallNoDecision(t *testing.T) {
	funcs := map[string]bool{}
	for _, d := range FrontEndCalls.Decisions {
		for _, name := range exportedFuncs(t, filepath.Join(root, d)) {
			funcs[d+"."+name] = true
		}
	}
	for _, dir := range FrontEndCalls.FrontEnds {
		for _, c := range decisionCalls(t, filepath.Join(root, dir), funcs) {
			t.Errorf("%s calls %s: a front end maps its inputs onto a usecase request and renders the answer; give the decision a request in usecase (or, for a closed set's names, a row of layering.FrontEndCalls.Allowed)", c.pos, c.expr)
		}
	}
}

// TestDecisionCallsFound is the test of the test: a call of a decision
// function is found; a type conversion and an allowed call are not.
func TestDecisionCallsFound(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nimport \"github.com/radixark/miles-ci/deps\"\n\nfunc a() {\n\t_ = deps.Source(\"x\")\n\t_, _ = deps.ParseLock(\"f\", nil)\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := decisionCalls(t, dir, map[string]bool{"deps.ParseLock": true})
	if len(got) != 1 || got[0].expr != "deps.ParseLock" || !strings.HasSuffix(got[0].pos, "x.go:7:9") {
		t.Errorf("wanted one call of deps.ParseLock at x.go:7:9, got %+v", got)
	}
}

// exportedFuncs lists the exported functions (not methods) of the non-test
// files of a package.
func exportedFuncs(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	for _, f := range parseDir(t, dir) {
		for _, d := range f.file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.IsExported() {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names
}

// decisionCalls lists the calls of funcs (package.Name, by the package's
// last path element) in the non-test files of dir, but for the allowed ones.
func decisionCalls(t *testing.T, dir string, funcs map[string]bool) []finding {
	t.Helper()
	var out []finding
	for _, f := range parseDir(t, dir) {
		ast.Inspect(f.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok {
				name := pkg.Name + "." + sel.Sel.Name
				if funcs[name] && !slices.Contains(FrontEndCalls.Allowed, name) {
					out = append(out, finding{pos: f.fset.Position(sel.Pos()).String(), expr: name})
				}
			}
			return true
		})
	}
	return out
}

type parsedFile struct {
	fset *token.FileSet
	name string
	file *ast.File
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) []parsedFile {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []parsedFile
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parsedFile{fset: fset, name: name, file: f})
	}
	return out
}
