package layering

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/radixark/miles-ci"

// root is the module's folder, from this package's.
var root = filepath.Join("..", "..")

// layoutRow is a row of the README's layout table: | layer | `path` | what |.
var layoutRow = regexp.MustCompile("^\\| *([0-9]+) *\\| *`([^`]+)`")

// readLayers reads the layer of every package from the README's layout table.
func readLayers(t *testing.T) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	layers := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		m := layoutRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		path := strings.TrimSuffix(m[2], "/")
		if path == "." {
			layers[modulePath] = n
		} else {
			layers[modulePath+"/"+path] = n
		}
	}
	if len(layers) == 0 {
		t.Fatal("README.md has no layout table rows (| layer | `path` | what |)")
	}
	return layers
}

// TestLayering holds the layering the README's layout table documents: every
// package of the module is in the table, imports (not test imports) point only
// to a lower layer, and internal/ holds only leaves, which import no package of
// the module.
func TestLayering(t *testing.T) {
	layers := readLayers(t)
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		seen[pkg] = true
		layer, ok := layers[pkg]
		if !ok {
			t.Errorf("%s is not in the README's layout table; add a row with its layer", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if imp != modulePath && !strings.HasPrefix(imp, modulePath+"/") {
				continue
			}
			if strings.HasPrefix(pkg, modulePath+"/internal/") {
				t.Errorf("%s imports %s: internal/ holds only leaves, which import no package of miles-ci", pkg, imp)
			}
			if l, ok := layers[imp]; ok && l >= layer {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point only to a lower layer (README, Layout)", pkg, layer, imp, l)
			}
		}
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("the README's layout table names %s, which is not a package of the module", pkg)
		}
	}
}
