package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// frontEnds are the module's two front ends: they map their inputs onto
// usecase's requests and hold no rule.
var frontEnds = []string{".", "cmd/miles-ci/cli"}

// TestFrontEndsWithholdNoSecret fails when a front end decides "a fork gets
// no secrets" itself: no non-test file of theirs may test a fork fact (in an
// if, a switch, or under !, &&, ||, == or !=). They pass it on to
// pipeline.HandedSecrets and usecase, which decide.
func TestFrontEndsWithholdNoSecret(t *testing.T) {
	for _, dir := range frontEnds {
		for _, f := range forkTests(t, filepath.Join(root, dir)) {
			t.Errorf("%s tests a fork fact (%s): pass it to pipeline.HandedSecrets or the usecase request, which decide what a fork's run gets", f.pos, f.expr)
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

type forkTest struct{ pos, expr string }

// forkTests lists the conditions on a fork fact (a name or field spelled
// fork, any case) in the non-test Go files of dir.
func forkTests(t *testing.T, dir string) []forkTest {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []forkTest
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var conds []ast.Expr
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.IfStmt:
				conds = append(conds, n.Cond)
			case *ast.SwitchStmt:
				if n.Tag != nil {
					conds = append(conds, n.Tag)
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
		// Inspect meets an outer condition before the ones inside it:
		// report the outermost only.
		var end token.Pos
		for _, c := range conds {
			if c.Pos() < end || !mentionsFork(c) {
				continue
			}
			end = c.End()
			out = append(out, forkTest{pos: fset.Position(c.Pos()).String(), expr: exprText(fset, name, c)})
		}
	}
	return out
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
