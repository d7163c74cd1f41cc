package checkoutpy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
)

// gpugenRegistry is a collect_tests written for this test, as a
// GPU-generation Miles has it (rules §11): each CUDA registration's
// CIRegistry carries its hardware list.
const gpugenRegistry = `

import dataclasses as _dc
import enum as _enum
import glob as _glob


class HWBackend(_enum.Enum):
    CUDA = "cuda"


@_dc.dataclass
class CIRegistry:
    backend: HWBackend
    filename: str
    est_time: float
    suite: str
    labels: list = _dc.field(default_factory=list)
    hardware: list = _dc.field(default_factory=list)
    nightly: bool = False
    disabled: object = None
    implicit: bool = False


def discover_ci_files():
    return sorted(_glob.glob("tests/e2e/**/test_*.py", recursive=True))


def collect_tests(files, sanity_check=True):
    import ast

    out = []
    for f in files:
        for node in ast.parse(open(f).read()).body:
            call = getattr(node, "value", None)
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "register_cuda_ci":
                kw = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
                out.append(CIRegistry(HWBackend.CUDA, f, float(kw["est_time"]), kw["suite"], kw["labels"], kw["hardware"]))
    return out
`

// TestCheckoutRegistryKeepsHardware: the checkout planner's registrations
// (explain --planner checkout shows them) keep a GPU-generation checkout's
// hardware=[...], which an older checkout's rows do not have.
func TestCheckoutRegistryKeepsHardware(t *testing.T) {
	testfiles.NeedPython(t)
	tree := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, filepath.Join("..", "testdata", "miles-gpugen"), tree)
	reg := filepath.Join(tree, "tests", "ci", "ci_register.py")
	src, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	testfiles.Write(t, filepath.Dir(reg), "ci_register.py", string(src)+gpugenRegistry)
	c, err := NewCheckout(tree, "")
	if err != nil {
		t.Fatal(err)
	}
	answers, err := c.Ask(context.Background(), []Case{{Registry: true}})
	if err != nil {
		t.Fatal(err)
	}
	if answers[0].Exit != 0 {
		t.Fatalf("collect_tests exited %d: %s", answers[0].Exit, answers[0].Stderr)
	}
	want := map[string][]string{
		"tests/e2e/short/test_hopper_only.py":    {"hopper"},
		"tests/e2e/short/test_portable_small.py": {"hopper", "blackwell"},
	}
	for _, r := range answers[0].Registrations {
		if hw, ok := want[r.File]; ok {
			if !slices.Equal(r.Hardware, hw) {
				t.Errorf("%s: wanted hardware %v, got %v", r.File, hw, r.Hardware)
			}
			delete(want, r.File)
		}
	}
	if len(want) > 0 {
		t.Errorf("wanted registrations of %v, got %+v", want, answers[0].Registrations)
	}
}
