package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
)

func TestDeclineForm(t *testing.T) {
	const optionalLabels = `_VALID_KWARGS = frozenset({"est_time", "suite", "labels", "nightly", "disabled"})


def register_cuda_ci(
    est_time: float,
    suite: str,
    *,
    labels: list[str] | None = None,
    nightly: bool = False,
    disabled: str | None = None,
):
    return None
`
	const requiredLabels = `_VALID_KWARGS = frozenset({"est_time", "suite", "labels", "nightly", "disabled"})


def register_cuda_ci(est_time: float, suite: str, *, labels: list[str], nightly: bool = False, disabled: str | None = None):
    return None
`
	const numGPUs = `def register_cuda_ci(
    est_time: float,
    suite: str,
    num_gpus: int = 8,
    nightly: bool = False,
    disabled: str | None = None,
):
    """Marker."""
    return None
`
	const withKwarg = `_VALID_KWARGS = frozenset({"est_time", "suite", "labels", "nightly", "disabled", "num_gpus"})


def register_cuda_ci(est_time, suite, *, labels, nightly=False, disabled=None, **extra):
    return None
`
	for _, tc := range []struct {
		name, register, test string
		// wantAhead is the AheadError's message part; "" wants the registry error unchanged.
		wantAhead, wantErr string
	}{
		{name: "GPU test without labels where labels has a default (mid-August 2026)", register: optionalLabels,
			test:      "register_cuda_ci(est_time=60, suite=\"stage-b-2-gpu-h200\", labels=[])\n",
			wantAhead: "this checkout's CI accepts register_cuda_ci() without labels, which miles-ci does not know yet; plan with --planner checkout (the checkout's own tests/ci code), or update miles-ci (an older registry form: tests/ci/ci_register.py:4 gives labels a default, so GPU tests need no domain label)"},
		{name: "GPU test without labels where the checkout requires them", register: requiredLabels,
			test:    "register_cuda_ci(est_time=60, suite=\"stage-b-2-gpu-h200\")\n",
			wantErr: "labels in register_cuda_ci() must contain at least one domain label"},
		{name: "a keyword the marker takes (April 2026)", register: numGPUs,
			test:      "register_cuda_ci(est_time=60, suite=\"stage-b-2-gpu-h200\", num_gpus=2)\n",
			wantAhead: "this checkout's CI accepts 'num_gpus', which miles-ci does not know yet; plan with --planner checkout (the checkout's own tests/ci code), or update miles-ci (register_cuda_ci() of tests/ci/ci_register.py:1 takes it)"},
		{name: "a positional the marker takes", register: numGPUs,
			test:      "register_cuda_ci(60, \"stage-b-2-gpu-h200\", 2)\n",
			wantAhead: "this checkout's CI accepts register_cuda_ci() with the positional parameters ['est_time', 'suite', 'num_gpus', 'nightly', 'disabled'], which miles-ci does not know yet"},
		{name: "a keyword _VALID_KWARGS lists", register: withKwarg,
			test:      "register_cuda_ci(est_time=60, suite=\"stage-b-2-gpu-h200\", labels=[\"megatron\"], num_gpus=2)\n",
			wantAhead: "(a registration keyword of tests/ci/ci_register.py:1 _VALID_KWARGS)"},
		{name: "a keyword the checkout refuses too", register: requiredLabels,
			test:    "register_cuda_ci(est_time=60, suite=\"stage-b-2-gpu-h200\", labels=[\"megatron\"], num_gpus=2)\n",
			wantErr: "unknown argument 'num_gpus' in register_cuda_ci()"},
		{name: "no ci_register.py: miles-ci's own form", register: "",
			test:    "register_cuda_ci(est_time=60, suite=\"stage-b-2-gpu-h200\")\n",
			wantErr: "labels in register_cuda_ci() must contain at least one domain label"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.register != "" {
				testfiles.Write(t, root, CIRegisterFile, tc.register)
			}
			testfiles.Write(t, root, "tests/e2e/test_a.py", "from tests.ci.ci_register import register_cuda_ci\n\n"+tc.test)
			_, err := LoadRegistry(root)
			var ahead *AheadError
			var re *RegistryError
			switch {
			case tc.wantAhead != "":
				if !errors.As(err, &ahead) {
					t.Fatalf("wanted an AheadError, got %v", err)
				}
				if !strings.Contains(err.Error(), tc.wantAhead) {
					t.Errorf("wanted %q in the message, got %q", tc.wantAhead, err)
				}
				if ahead.File != "tests/e2e/test_a.py" || ahead.Line != 3 {
					t.Errorf("wanted it at tests/e2e/test_a.py:3, got %s:%d", ahead.File, ahead.Line)
				}
			case tc.wantErr == "":
				if err != nil {
					t.Errorf("wanted the registry to load, got %v", err)
				}
			default:
				if !errors.As(err, &re) || errors.As(err, &ahead) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("wanted the registry error %q, got %v", tc.wantErr, err)
				}
			}
		})
	}
}

func TestOlderDiscovery(t *testing.T) {
	root := t.TempDir()
	testfiles.Write(t, root, RunSuiteFile, "import glob\n\nfrom tests.ci.ci_register import CIRegistry, HWBackend, collect_tests\n")
	testfiles.Write(t, root, "tests/e2e/test_a.py", "register_cuda_ci(est_time=60, suite=\"stage-b-2-gpu-h200\", labels=[\"megatron\"])\n")
	_, err := LoadRegistry(root)
	var ahead *AheadError
	if !errors.As(err, &ahead) || ahead.File != RunSuiteFile || ahead.Line != 3 ||
		!strings.Contains(err.Error(), "this checkout's CI accepts test discovery of its own in tests/ci/run_suite.py") {
		t.Fatalf("wanted an AheadError at tests/ci/run_suite.py:3, got %v", err)
	}
	testfiles.Write(t, root, RunSuiteFile, "from tests.ci.ci_register import CIRegistry, collect_tests, discover_ci_files\n")
	if _, err := LoadRegistry(root); err != nil {
		t.Errorf("wanted the registry of a checkout that calls discover_ci_files, got %v", err)
	}
}

func TestOlderPolicyStep(t *testing.T) {
	root := t.TempDir()
	step := func() error {
		t.Helper()
		tables, err := LoadTables(root)
		if err != nil {
			t.Fatal(err)
		}
		return tables.OlderPolicyStep()
	}
	const older = "import os\n\n\ndef resolve():\n    pass\n\n\ndef main() -> int:\n    event = os.environ[\"EVENT_NAME\"]\n    return 0\n"
	testfiles.Write(t, root, "tests/e2e/test_a.py", "")
	testfiles.Write(t, root, PolicyStepFile, older)
	err := step()
	var ahead *AheadError
	if !errors.As(err, &ahead) || ahead.Line != 8 || !strings.Contains(err.Error(), "a resolve-ci-policy step without CADENCE_OVERRIDE and skipped_stages") {
		t.Fatalf("wanted an AheadError at line 8, got %v", err)
	}
	testfiles.Write(t, root, PolicyStepFile, older+"# CADENCE_OVERRIDE and skipped_stages\n")
	if err := step(); err != nil {
		t.Errorf("wanted the current form accepted, got %v", err)
	}
	testfiles.Write(t, root, PolicyStepFile, "SCHEDULE_POLICIES = {}\n")
	if err := step(); err != nil {
		t.Errorf("wanted a tables-only ci_policy.py accepted, got %v", err)
	}
	if err := (*Tables)(nil).OlderPolicyStep(); err != nil {
		t.Errorf("wanted the built-in tables accepted, got %v", err)
	}
}
