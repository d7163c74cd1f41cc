package stagerun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestModuleIgnoresSourceExclude ties the module constructor's +ignore list
// (what the engine never uploads of a checkout) to SourceExclude (what a
// stage container never gets), so that the two cannot drift apart.
func TestModuleIgnoresSourceExclude(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	var lists [][]string
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "// +ignore=")
		if !ok {
			continue
		}
		var l []string
		if err := json.Unmarshal([]byte(rest), &l); err != nil {
			t.Fatalf("main.go: +ignore=%s is not a JSON list: %v", rest, err)
		}
		lists = append(lists, l)
	}
	if len(lists) != 1 {
		t.Fatalf("main.go has %d +ignore lists; wanted the constructor's source only", len(lists))
	}
	if !reflect.DeepEqual(lists[0], SourceExclude) {
		t.Errorf("main.go's +ignore is %q but stagerun.SourceExclude is %q; keep them the same", lists[0], SourceExclude)
	}
}
