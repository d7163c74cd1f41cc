package layering

import (
	"bufio"
	"bytes"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/internal/testfiles"
)

// root is the module's folder, from this package's.
var root = filepath.Join("..", "..")

// TestLayering holds the module to layering.Layers and the rules beside it.
func TestLayering(t *testing.T) {
	msgs, err := Check(root, Layers)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		t.Error(m)
	}
}

// TestCheckFails is the test of the test: each case breaks a rule in a copy of
// the module and wants Check to say so.
func TestCheckFails(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the module and runs go list once a case")
	}
	cases := []struct {
		name   string
		file   string // written into the copy
		source string
		layers map[string]int // nil: Layers
		want   string         // in a message, or in the error when wantErr
		errors bool
	}{
		{name: "policy imports dagger.io/dagger", file: "policy/zz_bad.go",
			source: "package policy\n\nimport _ \"dagger.io/dagger\"\n",
			want:   "policy imports dagger.io/dagger: only ., internal/dagger, cmd/miles-ci/engine import a Dagger SDK"},
		{name: "report imports the generated Dagger client", file: "report/zz_bad.go",
			source: "package report\n\nimport _ \"github.com/radixark/miles-ci/internal/dagger\"\n",
			want:   "report imports github.com/radixark/miles-ci/internal/dagger: only"},
		{name: "an upward import", file: "deps/zz_bad.go",
			source: "package deps\n\nimport _ \"github.com/radixark/miles-ci/report\"\n",
			want:   "deps (layer 3) imports report (layer 4): imports point only to a lower layer"},
		{name: "a domain package runs a process", file: "deps/zz_bad.go",
			source: "package deps\n\nimport _ \"os/exec\"\n",
			want:   "deps depends on os/exec (deps -> os/exec)"},
		{name: "a domain package reaches the network through another", file: "workflows/zz_bad.go",
			source: "package workflows\n\nimport _ \"github.com/radixark/miles-ci/github\"\n",
			want:   "workflows depends on net/http (workflows -> github -> "},
		{name: "the module links the history", file: "zz_bad.go",
			source: "package main\n\nimport _ \"github.com/radixark/miles-ci/usecase/runhistory\"\n",
			want:   ". (the Dagger module) depends on history (. -> usecase/runhistory -> history)"},
		{name: "the module links a history driver", file: "zz_bad.go",
			source: "package main\n\nimport _ \"github.com/jackc/pgx/v5/pgconn\"\n",
			want:   ". (the Dagger module) depends on github.com/jackc/pgx/v5/pgconn (. -> github.com/jackc/pgx/v5/pgconn)"},
		{name: "an internal package imports the module", file: "internal/lazyre/zz_bad.go",
			source: "package lazyre\n\nimport _ \"github.com/radixark/miles-ci/internal/encode\"\n",
			want:   "internal/lazyre imports internal/encode: a package under internal/ is a leaf"},
		{name: "a package not in the table", file: "policy/newpkg/newpkg.go",
			source: "package newpkg\n",
			want:   "policy/newpkg is not in layering.Layers"},
		{name: "a row naming no package", layers: with(Layers, "policy/gone", 2),
			want: "layering.Layers names policy/gone, which is not a package of the module"},
		{name: "an import cycle", file: "policy/zz_bad.go",
			source: "package policy\n\nimport _ \"github.com/radixark/miles-ci/usecase\"\n",
			want:   "import cycle not allowed", errors: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := copyModule(t)
			if c.file != "" {
				testfiles.Write(t, dir, c.file, c.source)
			}
			layers := c.layers
			if layers == nil {
				layers = Layers
			}
			msgs, err := Check(dir, layers)
			if c.errors {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("wanted an error with %q, got %v (messages %q)", c.want, err, msgs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 1 || !strings.Contains(msgs[0], c.want) {
				t.Fatalf("wanted one message with %q, got %q", c.want, msgs)
			}
		})
	}
}

// TestLayeringIsNotCached runs TestLayering in a copy of the module with go
// test, twice (the second answer from the cache), then breaks the copy and
// runs it again: the answer must be the failure, not the cached pass.
func TestLayeringIsNotCached(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the module and runs go test three times")
	}
	t.Parallel()
	dir := copyModule(t)
	// Files younger than a few seconds are never cached; age them all.
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(path, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func() (string, error) {
		cmd := exec.Command("go", "test", "-run", "^TestLayering$", "./internal/layering/")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(); err != nil {
		t.Fatalf("the copy fails before it is broken: %v\n%s", err, out)
	}
	if out, _ := run(); !strings.Contains(out, "(cached)") {
		t.Skipf("go test does not cache here, so there is nothing to check:\n%s", out)
	}
	// A maintainer's edit: an existing file gains an import, a second later.
	doc := filepath.Join(dir, "policy", "doc.go")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	testfiles.Write(t, dir, "policy/doc.go", string(data)+"\nimport _ \"dagger.io/dagger\"\n")
	out, err := run()
	if err == nil || strings.Contains(out, "(cached)") || !strings.Contains(out, "policy imports dagger.io/dagger") {
		t.Fatalf("wanted TestLayering to fail on policy importing dagger.io/dagger, got %v:\n%s", err, out)
	}
}

// TestLayersDocumented checks that the table of docs/architecture.md gives
// every package the layer layering.Layers gives it, and names no other.
func TestLayersDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| *([0-9]+) *\\| *`([^`]+)`")
	documented := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			documented[strings.TrimSuffix(m[2], "/")], _ = strconv.Atoi(m[1])
		}
	}
	for _, path := range slices.Sorted(maps.Keys(Layers)) {
		layer := Layers[path]
		if l, ok := documented[path]; !ok {
			t.Errorf("docs/architecture.md has no row for %s (layer %d): add | %d | `%s/` | what it holds |", path, layer, layer, path)
		} else if l != layer {
			t.Errorf("docs/architecture.md gives %s layer %d, layering.Layers %d", path, l, layer)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(documented)) {
		if _, ok := Layers[path]; !ok {
			t.Errorf("docs/architecture.md has a row for %s, which layering.Layers does not name", path)
		}
	}
}

// with is a copy of layers with one more row.
func with(layers map[string]int, path string, layer int) map[string]int {
	out := map[string]int{path: layer}
	for p, l := range layers {
		out[p] = l
	}
	return out
}

// copyModule copies what go list reads of the module (not testdata/, hidden
// folders or hack/, a module of its own) into a temporary folder.
func copyModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if r != "." && (d.Name() == "testdata" || d.Name() == "hack" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, r), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, r), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
