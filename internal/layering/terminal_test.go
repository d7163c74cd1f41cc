package layering

import (
	"go/ast"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wayOut says which files may touch the process's stdout and stderr, and
// which the one writer (internal/printable.Writer) and the annotations
// that pass it as commands: every other file prints through a command's
// Env (cmd/miles-ci/cli.Run wraps it in the writer) or the module's
// progress function.
var wayOut = struct {
	// Terminal are the files that name os.Stdout or os.Stderr: the
	// command's main (which hands them to cli.Run), the module's one
	// writer, and a test server's command that is no part of miles-ci.
	Terminal []string
	// Writer are the files that make or hold a printable.Writer: Run, the
	// command's output helpers, the module's one writer.
	Writer []string
	// Commands are the files that format workflow commands (annotations)
	// for the writer to pass as they are: the command's output helpers,
	// the module's, and lint's answer under GitHub Actions.
	Commands []string
	// Exempt are files no rule reads: a test server's command, no part of
	// miles-ci (generated files, NAME.gen.go, are
	// skipped too).
	Exempt []string
}{
	Terminal: []string{"cmd/miles-ci/main.go", "main.go"},
	Writer:   []string{"cmd/miles-ci/cli/cli.go", "cmd/miles-ci/cli/output.go", "main.go"},
	Commands: []string{"cmd/miles-ci/cli/output.go", "main.go", "usecase/lint.go"},
	Exempt:   []string{"github/githubtest/standin/main.go"},
}

// TestOneWayOut fails when a command writes to the terminal around the
// one writer (issue 38: one way out for text): no product file but those
// of wayOut names os.Stdout or os.Stderr, calls fmt.Print*, print,
// println or a log function, makes a printable.Writer, or formats a
// workflow command (ghoutput.Annotation*), which the writer lets through.
func TestOneWayOut(t *testing.T) {
	var dirs []string
	for pkg := range Layers {
		dirs = append(dirs, pkg)
	}
	dirs = append(dirs, "cmd/miles-ci")
	slices.Sort(dirs)
	for _, dir := range dirs {
		for _, f := range wayOutFindings(t, filepath.Join(root, dir), dir) {
			t.Errorf("%s: %s; print through the command's Env (cli.Run's printable.Writer) or the module's progress, annotations through annotate or fail", f.pos, f.expr)
		}
	}
}

// TestWayOutFound is the test of the test: each way around the writer is
// found in a file the rules do not allow it in.
func TestWayOutFound(t *testing.T) {
	dir := t.TempDir()
	src := `package x

func a(w any) {
	fmt.Println("x")
	fmt.Fprintf(os.Stderr, "x")
	log.Printf("x")
	println("x")
	_ = printable.NewWriter(nil)
	_ = ghoutput.Annotation("error", "", 0, "x")
	fmt.Fprintf(env.Stdout, "fine: the Env's writer")
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := wayOutFindings(t, dir, "x")
	var exprs []string
	for _, f := range got {
		exprs = append(exprs, f.expr)
	}
	want := []string{"fmt.Println", "os.Stderr", "log.Printf", "println", "printable.NewWriter", "ghoutput.Annotation"}
	for _, w := range want {
		if !slices.ContainsFunc(exprs, func(e string) bool { return strings.HasPrefix(e, w) }) {
			t.Errorf("wanted %s found, got %v", w, exprs)
		}
	}
	if len(got) != len(want) {
		t.Errorf("wanted %d findings, got %v", len(want), exprs)
	}
}

// wayOutFindings lists the ways around the one writer in the non-test Go
// files of dir (pkg its path in the module).
func wayOutFindings(t *testing.T, dir, pkg string) []finding {
	t.Helper()
	var out []finding
	for _, pf := range parseDir(t, dir) {
		rel := filepath.ToSlash(filepath.Join(pkg, filepath.Base(pf.name)))
		if pkg == "." {
			rel = filepath.Base(pf.name)
		}
		allowed := func(list []string) bool { return slices.Contains(list, rel) }
		if allowed(wayOut.Exempt) || strings.HasSuffix(rel, ".gen.go") {
			continue
		}
		add := func(n ast.Node, what string) {
			out = append(out, finding{pos: pf.fset.Position(n.Pos()).String(), expr: what})
		}
		ast.Inspect(pf.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				x, ok := n.X.(*ast.Ident)
				if !ok {
					return true
				}
				name := x.Name + "." + n.Sel.Name
				switch {
				case (name == "os.Stdout" || name == "os.Stderr") && !allowed(wayOut.Terminal):
					add(n, name+" is the terminal itself")
				case x.Name == "fmt" && strings.HasPrefix(n.Sel.Name, "Print"):
					add(n, name+" prints on stdout")
				case x.Name == "log" && n.Sel.Name != "New":
					add(n, name+" prints on stderr")
				case x.Name == "printable" && (n.Sel.Name == "NewWriter" || n.Sel.Name == "Writer") && !allowed(wayOut.Writer):
					add(n, name+" holds the one writer")
				case x.Name == "ghoutput" && strings.Contains(n.Sel.Name, "Annotation") && !allowed(wayOut.Commands):
					add(n, name+" makes a workflow command")
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "print" || id.Name == "println") {
					add(n, id.Name+" prints on stderr")
				}
			}
			return true
		})
	}
	return out
}
