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

// TestModuleDescriptionsAreSentences holds the Dagger module's descriptions
// to what `dagger functions` shows of them, the first line: for every
// function (an exported method of an exported type at the root) and every
// field a caller sees (exported, not +private), that line is a whole
// sentence, ending in a full stop.
func TestModuleDescriptionsAreSentences(t *testing.T) {
	for _, d := range firstDocLines(t, root) {
		switch {
		case d.line == "":
			t.Errorf("%s: %s has no description: write one whose first line is a whole sentence", d.pos, d.name)
		case !strings.HasSuffix(d.line, "."):
			t.Errorf("%s: the first line of %s's description is not a whole sentence (dagger functions shows only it): %q", d.pos, d.name, d.line)
		}
	}
}

// TestFirstDocLinesFound is the test of the test: a description cut at the
// line's end, a missing one, a private field and an unexported type.
func TestFirstDocLinesFound(t *testing.T) {
	dir := t.TempDir()
	src := `package main

// T is a thing.
type T struct {
	// +private
	Hidden string
	// Shown is cut
	// here.
	Shown string
	Bare string
}

// Run runs it, and
// more.
func (T) Run() {}

func (T) Undocumented() {}

type u struct{}

func (u) Skipped() {}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range firstDocLines(t, dir) {
		got = append(got, d.name+"="+d.line)
	}
	want := "T=T is a thing.|T.Shown=Shown is cut|T.Bare=|T.Run=Run runs it, and|T.Undocumented="
	if strings.Join(got, "|") != want {
		t.Errorf("wanted %q, got %q", want, strings.Join(got, "|"))
	}
}

// docLine is the first line of one module type's, field's or function's
// description, pragmas (+private, +cache=...) left out.
type docLine struct{ pos, name, line string }

// firstDocLines lists the descriptions the module's callers see, in the
// non-test Go files of dir but the generated dagger.gen.go.
func firstDocLines(t *testing.T, dir string) []docLine {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []docLine
	add := func(at token.Pos, name string, doc *ast.CommentGroup) {
		line, private := "", false
		for l := range strings.Lines(doc.Text()) {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "+") {
				private = private || l == "+private"
				continue
			}
			if line == "" {
				line = l
			}
		}
		if !private {
			out = append(out, docLine{pos: fset.Position(at).String(), name: name, line: line})
		}
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || filepath.Base(name) == "dagger.gen.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					doc := ts.Doc
					if doc == nil && len(d.Specs) == 1 {
						doc = d.Doc
					}
					add(ts.Pos(), ts.Name.Name, doc)
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fld := range st.Fields.List {
						for _, n := range fld.Names {
							if n.IsExported() {
								add(n.Pos(), ts.Name.Name+"."+n.Name, fld.Doc)
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || !d.Name.IsExported() {
					continue
				}
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
					add(d.Pos(), id.Name+"."+d.Name.Name, d.Doc)
				}
			}
		}
	}
	return out
}
