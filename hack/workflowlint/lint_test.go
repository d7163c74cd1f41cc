// Package workflowlint checks the generated workflows under
// examples/workflows with actionlint (github.com/rhysd/actionlint, used as a
// library), and with shellcheck on their run: scripts when shellcheck is
// installed. It lives under hack/ so the product module does not depend on
// the linter.
package workflowlint

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rhysd/actionlint"
)

func TestGeneratedWorkflowsLintClean(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated workflows found under examples/workflows (%v)", err)
	}
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Log("shellcheck is not installed (apt-get install shellcheck); checking the workflows without it")
		shellcheck = ""
	}
	var out bytes.Buffer
	linter, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{
		Shellcheck: shellcheck,
		ConfigFile: "actionlint.yaml",
		Oneline:    true,
	})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := linter.LintFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatalf("actionlint found %d problem(s):\n%s", len(errs), out.String())
	}
	t.Logf("actionlint: %d workflow(s) clean (shellcheck: %t)", len(files), shellcheck != "")
}
