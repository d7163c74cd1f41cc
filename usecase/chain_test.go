package usecase

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleChainPlansOnce counts the plans of the module's chain `stage ...
// shard --number N plan|spec|test`, with the calls it makes: PlanStage at the
// stage, then each hop reads the plan back from the Stage's field (the
// engine hands each call its parent as JSON).
func TestModuleChainPlansOnce(t *testing.T) {
	before := Plannings()
	p, err := PlanStage(Inputs{Repo: milesRepo, Stage: "stage-c-4-gpu-h200", Labels: []string{"run-ci-megatron"}})
	if err != nil {
		t.Fatal(err)
	}
	field, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for id := range 3 {
		for range []string{"shard", "plan", "spec", "test"} {
			back, err := DecodeStagePlan(field)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := back.Shard(id + 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := Plannings() - before; n != 1 {
		t.Errorf("wanted 1 plan for the chain, got %d", n)
	}
}

// TestModulePlansAtOneHop reads the module's source (the repository root,
// which cannot be tested without an engine): a stage is planned in
// MilesCi.planStage and a file run in MilesCi.File, and nowhere else, so no
// hop after them plans again.
func TestModulePlansAtOneHop(t *testing.T) {
	planners := map[string]string{"PlanStage": "planStage", "PlanFile": "File", "Stage": "", "File": "", "Plan": "Plan"}
	files, err := filepath.Glob(filepath.Join("..", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, ".gen.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "usecase" {
					return true
				}
				want, planner := planners[sel.Sel.Name]
				if !planner {
					return true
				}
				calls[sel.Sel.Name]++
				if fn.Name.Name != want {
					t.Errorf("%s: %s calls usecase.%s; only %q may plan, once per chain", f, fn.Name.Name, sel.Sel.Name, want)
				}
				return true
			})
		}
	}
	if calls["PlanStage"] != 1 || calls["PlanFile"] != 1 {
		t.Errorf("wanted usecase.PlanStage and usecase.PlanFile called once each in the module, got %v", calls)
	}
}
