package layering

import (
	"go/ast"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestUseCasesRunNoGit fails when a use case runs git itself (a "git"
// argument): reading a checkout's .git, its HEAD or its merge base, is
// infrastructure (gitrepo) that a front end hands the use cases, as it
// hands them the engine and the stores.
func TestUseCasesRunNoGit(t *testing.T) {
	for _, f := range gitCalls(t, filepath.Join(root, "usecase")) {
		t.Errorf("%s names the git command: a use case takes what git says from gitrepo (usecase.Git, gitrepo.BaseCheckout), not from git itself", f.pos)
	}
}

// TestGitCallsFound is the test of the test: the git command's name is
// found, a .git folder's name and a word in a longer string are not.
func TestGitCallsFound(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	src := "package x\n\nvar a = []string{\"git\", \"rev-parse\"}\nvar b = \".git\"\nvar c = \"git archive\"\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := gitCalls(t, filepath.Dir(dir))
	if len(got) != 1 || !strings.HasSuffix(got[0].pos, "x.go:3:18") {
		t.Errorf("wanted the one \"git\" at x.go:3:18, got %+v", got)
	}
}

// gitCalls lists the string literals "git" in the non-test files below dir.
func gitCalls(t *testing.T, dir string) []finding {
	t.Helper()
	var out []finding
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		for _, pf := range parseDir(t, p) {
			ast.Inspect(pf.file, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && s == "git" {
						out = append(out, finding{pos: pf.fset.Position(lit.Pos()).String(), expr: lit.Value})
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
