package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
)

// writeTree writes repo-relative files below a fresh folder.
func writeTree(tb testing.TB, files map[string]string) string {
	tb.Helper()
	root := tb.TempDir()
	// A Miles checkout has a tests/ folder (policy.CheckCheckout).
	if err := os.MkdirAll(filepath.Join(root, "tests"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for rel, content := range files {
		testfiles.Write(tb, root, rel, content)
	}
	return root
}

// withoutSources drops what says where rows came from, to compare values.
func withoutSources(st []Stage) []Stage {
	out := make([]Stage, len(st))
	for i, s := range st {
		s = s.clone()
		s.Source, s.Job = "", ""
		out[i] = s
	}
	return out
}

// testdata/miles holds the tables in Miles' syntax with the built-in values.
func TestTestdataTablesEqualBuiltin(t *testing.T) {
	got, err := LoadTables(filepath.Join("..", "testdata", "miles"))
	if err != nil {
		t.Fatal(err)
	}
	want := BuiltinTables()
	if !reflect.DeepEqual(got.KnownLabels(), want.KnownLabels()) {
		t.Errorf("labels: wanted %q, got %q", want.KnownLabels(), got.KnownLabels())
	}
	if !reflect.DeepEqual(got.Suites, want.Suites) {
		t.Errorf("suites: wanted %v, got %v", want.Suites, got.Suites)
	}
	if !reflect.DeepEqual(withoutSources(got.Roster), withoutSources(want.Roster)) {
		t.Errorf("roster:\nwanted %+v\ngot    %+v", withoutSources(want.Roster), withoutSources(got.Roster))
	}
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"PR GPU stages", got.PRGPU, want.PRGPU},
		{"broad scopes", got.BroadScopes, want.BroadScopes},
		{"no-GPU paths", got.NoGPUPaths, want.NoGPUPaths},
		{"no-GPU prefixes", got.NoGPUPrefixes, want.NoGPUPrefixes},
		{"no-GPU suffixes", got.NoGPUSuffixes, want.NoGPUSuffixes},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: wanted %q, got %q", c.name, c.want, c.got)
		}
	}
	if !reflect.DeepEqual(got.Crons, want.Crons) {
		t.Errorf("crons: wanted %v, got %v", want.Crons, got.Crons)
	}
	for _, o := range got.Origins {
		// CI_SUITES lives in run_suite.py, which testdata/miles may or may not hold.
		if o.Builtin() && o.Table != TableSuites {
			t.Errorf("table %s: wanted it read from testdata/miles, got the built-in value", o.Table)
		}
	}
	if o := got.Origin(TableLabels); o.String() != "tests/ci/labels.py:7" {
		t.Errorf("KNOWN_LABELS origin: wanted %q, got %q", "tests/ci/labels.py:7", o)
	}
}

func TestAbsentTablesAreBuiltin(t *testing.T) {
	got, err := LoadTables(writeTree(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	tables := *got
	tables.files = nil // the workflow files it read (none)
	if !reflect.DeepEqual(&tables, BuiltinTables()) {
		t.Errorf("an empty tree: wanted the built-in tables, got %+v", got)
	}
	if note := got.FallbackNote("x"); !strings.HasPrefix(note, "x holds no Miles CI tables") {
		t.Errorf("wanted the fallback note, got %q", note)
	}
	// The current folder is named as every other message names it, not ".".
	wd, _ := os.Getwd()
	for _, root := range []string{"", "."} {
		if note, want := got.FallbackNote(root), "the current folder ("+wd+") holds no Miles CI tables"; !strings.HasPrefix(note, want) {
			t.Errorf("%q: wanted %q..., got %q", root, want, note)
		}
	}
	// A file without the assignment keeps the built-in value.
	root := writeTree(t, map[string]string{RunSuiteFile: "HW_MAPPING = {}\n", LabelsFile: "KNOWN_LABELS = {\"a\": \"x\"}\n"})
	got, err = LoadTables(root)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Origin(TableSuites).Builtin() || got.Origin(TableLabels).Builtin() {
		t.Errorf("wanted CI_SUITES built-in and KNOWN_LABELS read, got %v", got.Origins)
	}
	if want := "R does not define CI_SUITES, PR_GPU_STAGES, _BROAD_PR_SCOPES, _NO_GPU_PATHS, _NO_GPU_PREFIXES, _NO_GPU_SUFFIXES, SCHEDULE_POLICIES, roster; using the built-in values of Miles 31f1ca9 for those"; got.FallbackNote("R") != want {
		t.Errorf("wanted %q, got %q", want, got.FallbackNote("R"))
	}
}

// Before CI_SUITES, run_suite.py kept the regular suites in PER_COMMIT_SUITES
// and the nightly ones in NIGHTLY_SUITES; those are the checkout's suites.
func TestOlderSuiteTableNames(t *testing.T) {
	root := writeTree(t, map[string]string{RunSuiteFile: `from tests.ci.ci_register import HWBackend

# Per-commit suites.
PER_COMMIT_SUITES = {
    HWBackend.CPU: ["stage-a-cpu"],
    HWBackend.CUDA: [
        "stage-b-1-gpu-a100",
        "stage-c-8-gpu-a100",
    ],
    HWBackend.ROCM: ["stage-c-8-gpu-mi325"],
}

# Nightly suites.
NIGHTLY_SUITES = {
    HWBackend.CUDA: ["stage-c-8-gpu-a100", "nightly-8-gpu-a100"],
}
`})
	got, err := LoadTables(root)
	if err != nil {
		t.Fatal(err)
	}
	want := BackendSuites{CPU: []string{"stage-a-cpu"}, CUDA: []string{"stage-b-1-gpu-a100", "stage-c-8-gpu-a100", "nightly-8-gpu-a100"}, ROCM: []string{"stage-c-8-gpu-mi325"}}
	if !reflect.DeepEqual(got.Suites, want) {
		t.Errorf("wanted %+v, got %+v", want, got.Suites)
	}
	if o := got.Origin(TableSuites); o.String() != "tests/ci/run_suite.py:4" {
		t.Errorf("wanted the origin at PER_COMMIT_SUITES, got %q", o)
	}
	if f, l := got.locate(TableSuites, "nightly-8-gpu-a100"); f != RunSuiteFile || l != 15 {
		t.Errorf("wanted nightly-8-gpu-a100 at %s:15, got %s:%d", RunSuiteFile, f, l)
	}
	if err := got.CheckSuite(ROCM, "stage-c-8-gpu-mi325"); err != nil {
		t.Errorf("wanted the older suite known, got %v", err)
	}
	// Without workflows the built-in roster stays, but only for the suites
	// the checkout lists, and its nightly- suites are the external rows.
	var names []string
	for _, st := range got.Roster {
		names = append(names, st.Name+"@"+st.Source)
	}
	if want := []string{"stage-a-cpu@built-in", "nightly-8-gpu-a100@tests/ci/run_suite.py:15"}; !reflect.DeepEqual(names, want) {
		t.Errorf("roster: wanted %q, got %q", want, names)
	}
	// CI_SUITES wins when both are there, as it did in run_suite.py.
	root = writeTree(t, map[string]string{RunSuiteFile: "PER_COMMIT_SUITES = {\"cuda\": [\"old\"]}\nCI_SUITES = {\"cuda\": [\"new\"]}\n"})
	if got, err = LoadTables(root); err != nil || !reflect.DeepEqual(got.Suites.CUDA, []string{"new"}) {
		t.Errorf("wanted CI_SUITES, got %+v, %v", got, err)
	}
	root = writeTree(t, map[string]string{RunSuiteFile: "PER_COMMIT_SUITES = load()\n"})
	if _, err = LoadTables(root); err == nil || tableMessage(err) != "tests/ci/run_suite.py:1: PER_COMMIT_SUITES must be a dict of backend to suites, e.g. {HWBackend.CPU: [\"stage-a-cpu\"]}, not a call of load()" {
		t.Errorf("wanted the PER_COMMIT_SUITES error, got %v", err)
	}
}

// A Miles from before PR stage selection has no stage_selection.py and no
// skipped_stages gates: none of its stages is a PR GPU stage, so policy skips
// none and lint asks for no gate. Where its workflows gate some stages, those
// built-in stages stay skippable.
func TestPRStagesWithoutStageSelection(t *testing.T) {
	job := func(name, gate string) string {
		return "  " + name + ":\n" + gate + `    uses: ./.github/workflows/_run-gpu.yml
    with:
      runs_on: '["gpu"]'
      execute_command: python tests/ci/run_suite.py --hw cuda --suite ` + name + "\n"
	}
	gate := "    if: ${{ !contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), 'stage-c-8-gpu-h200') }}\n"
	for _, tt := range []struct {
		name, workflow string
		want           []string
	}{
		{"no gates", "jobs:\n" + job("stage-c-8-gpu-h200", "") + job("stage-c-8-gpu-h100", ""), []string{}},
		{"one gate", "jobs:\n" + job("stage-c-8-gpu-h200", gate) + job("stage-c-8-gpu-h100", ""), []string{"stage-c-8-gpu-h200"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{
				LabelsFile:            "KNOWN_LABELS = {\"megatron\": \"x\"}\n",
				PRTestWorkflow:        tt.workflow,
				"tests/e2e/test_a.py": `register_cuda_ci(est_time=1, suite="stage-c-8-gpu-h200", labels=["megatron"])` + "\n",
				"tests/e2e/test_b.py": `register_cuda_ci(est_time=1, suite="stage-c-8-gpu-h100", labels=["megatron"])` + "\n",
			})
			reg, err := LoadRegistry(root)
			if err != nil {
				t.Fatal(err)
			}
			if got := reg.Tables.PRGPUStages(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PR GPU stages: wanted %q, got %q", tt.want, got)
			}
			for _, d := range Lint(reg) {
				if d.Kind == DriftUngated {
					t.Errorf("wanted no ungated-pr-stage, got %s", d)
				}
			}
		})
	}
	// Without workflows of its own (a tree that is not Miles) the built-in table stays whole.
	got, err := LoadTables(writeTree(t, map[string]string{LabelsFile: "KNOWN_LABELS = {\"megatron\": \"x\"}\n"}))
	if err != nil || !reflect.DeepEqual(got.PRGPUStages(), PRGPUStages()) {
		t.Errorf("wanted the built-in PR GPU stages, got %v, %v", got.PRGPUStages(), err)
	}
}

// A table may name a literal that another tests/ci module defines, the way
// a newer Miles derives its CUDA suites from a stage table in
// tests/ci/hardware.py: iterating a dict gives its keys.
func TestImportedTables(t *testing.T) {
	const fleet = `"""Stages."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    gpus: int
    runs_on: tuple[str, ...]


RDMA = "stage-c-8-gpu-x1-rdma"

FLEET: dict[str, Stage] = {
    "stage-c-8-gpu-x1": Stage(8, ("x1", "8gpu")),
    RDMA: Stage(8, ("x1", "8gpu", "rdma")),
    "stage-b-2-gpu-x1": Stage(2, ("x1", "2gpu")),
}
`
	for _, tt := range []struct{ name, cuda, want string }{
		{"list", "list(FLEET)", "stage-c-8-gpu-x1 stage-c-8-gpu-x1-rdma stage-b-2-gpu-x1"},
		{"sorted", "sorted(FLEET)", "stage-b-2-gpu-x1 stage-c-8-gpu-x1 stage-c-8-gpu-x1-rdma"},
		{"alias", "tuple(STAGES)", "stage-c-8-gpu-x1 stage-c-8-gpu-x1-rdma stage-b-2-gpu-x1"},
		{"dict itself", "FLEET", "stage-c-8-gpu-x1 stage-c-8-gpu-x1-rdma stage-b-2-gpu-x1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"tests/ci/fleet.py": fleet, RunSuiteFile: `from tests.ci.ci_register import HWBackend
from tests.ci.fleet import FLEET
from tests.ci.fleet import (
    FLEET as STAGES,
)

CI_SUITES = {
    HWBackend.CPU: ["stage-a-cpu"],
    HWBackend.CUDA: ` + tt.cuda + `,
}
`})
			got, err := LoadTables(root)
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got.Suites.CUDA, " "); g != tt.want {
				t.Errorf("wanted %q, got %q", tt.want, g)
			}
			// Elements are reported where the table uses them.
			if f, l := got.locate(TableSuites, "stage-c-8-gpu-x1-rdma"); f != RunSuiteFile || l != 9 {
				t.Errorf("wanted the rdma suite at %s:9, got %s:%d", RunSuiteFile, f, l)
			}
		})
	}
	for _, tt := range []struct{ name, runSuite, fleet, want string }{
		{"module absent", "from tests.ci.fleet import FLEET\nCI_SUITES = {\"cuda\": list(FLEET)}\n", "",
			`tests/ci/run_suite.py:2: CI_SUITES must be a list, tuple or set of strings, not the name FLEET (from tests.ci.fleet import FLEET, where miles-ci finds no literal of that name)`},
		{"not a tests/ci module", "from miles.fleet import FLEET\nCI_SUITES = {\"cuda\": list(FLEET)}\n", "FLEET = {}\n",
			`tests/ci/run_suite.py:2: CI_SUITES must be a list, tuple or set of strings, not the name FLEET (from miles.fleet import FLEET, where miles-ci finds no literal of that name)`},
		{"computed there", "from tests.ci.fleet import FLEET\nCI_SUITES = {\"cuda\": list(FLEET)}\n", "FLEET = load()\n",
			`tests/ci/run_suite.py:2: CI_SUITES must be a list, tuple or set of strings, not a call of load()`},
		{"self reference", "from tests.ci.run_suite import A as B\nA = [B]\nCI_SUITES = {\"cuda\": list(B)}\n", "",
			`tests/ci/run_suite.py:3: CI_SUITES each element must be a string (or a module-level string constant), not a list`},
		{"import cycle", "from tests.ci.fleet import FLEET\nCI_SUITES = {\"cuda\": list(FLEET)}\n", "from tests.ci.run_suite import FLEET\n",
			`tests/ci/run_suite.py:2: CI_SUITES must be a list, tuple or set of strings, not the name FLEET (from tests.ci.fleet import FLEET, where miles-ci finds no literal of that name)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{RunSuiteFile: tt.runSuite}
			if tt.fleet != "" {
				files["tests/ci/fleet.py"] = tt.fleet
			}
			_, err := LoadTables(writeTree(t, files))
			if err == nil || tableMessage(err) != tt.want {
				t.Errorf("wanted %q, got %v", tt.want, err)
			}
		})
	}
	// The later binding wins, as in Python.
	root := writeTree(t, map[string]string{"tests/ci/fleet.py": "FLEET = {\"imported\": 1}\n",
		RunSuiteFile: "FLEET = {\"assigned\": 1}\nfrom tests.ci.fleet import FLEET\nCI_SUITES = {\"cuda\": list(FLEET)}\n"})
	if got, err := LoadTables(root); err != nil || !reflect.DeepEqual(got.Suites.CUDA, []string{"imported"}) {
		t.Errorf("wanted the import to win, got %v, %v", got.Suites.CUDA, err)
	}
}

// The forms Miles writes its tables in across its history.
func TestTableForms(t *testing.T) {
	root := writeTree(t, map[string]string{
		LabelsFile: `"""Labels."""

MEGATRON = "megatron"

KNOWN_LABELS: dict[str, str] = {
    MEGATRON: "Megatron-LM training tests",
    "sglang": (
        "SGLang "
        "tests"
    ),  # a comment
    'fsdp': """FSDP""",
}
`,
		RunSuiteFile: `from tests.ci.ci_register import HWBackend

HW_MAPPING = {"cpu": HWBackend.CPU}

STAGE_A = "stage-a-cpu"

CI_SUITES = {
    HWBackend.CPU: [STAGE_A, "stage-b-cpu"],
    HWBackend.CUDA: ("stage-c-8-gpu-h100",),
    HWBackend.ROCM: [
        # external
        "nightly-stage-c-2-gpu-mi350",
    ],
    HWBackend.NPU: ["stage-x-npu"],
}


def main():
    CI_SUITES = {}  # a local, not the table
`,
		StageSelectionFile: `import re
PR_GPU_STAGES = frozenset(
    {
        "stage-c-8-gpu-h100",
    }
)
_BROAD_PR_SCOPES = frozenset({"nightly", "run-ci-all", "run-ci-image", "run-ci-blackwell-only"})
_NO_GPU_PATHS = frozenset()
_NO_GPU_PREFIXES = "docs/"
_NO_GPU_SUFFIXES = (".md", ".mdx", ".rst")
_STATUS = re.compile(r"^x$")
`,
		CIPolicyFile: `NIGHTLY_CADENCE = "nightly"
WEEKLY_CADENCE = "weekly"
SCHEDULE_POLICIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "0 14 * * 0-5": (NIGHTLY_CADENCE, ()),
    "0 14 * * 6": (WEEKLY_CADENCE, ("run-ci-long",)),
    "0 3 * * *": "regular",
}
`,
	})
	got, err := LoadTables(root)
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := []Label{{"megatron", "Megatron-LM training tests"}, {"sglang", "SGLang tests"}, {"fsdp", "FSDP"}}
	if !reflect.DeepEqual(got.Labels, wantLabels) {
		t.Errorf("labels: wanted %v, got %v", wantLabels, got.Labels)
	}
	wantSuites := BackendSuites{CPU: []string{"stage-a-cpu", "stage-b-cpu"}, CUDA: []string{"stage-c-8-gpu-h100"}, ROCM: []string{"nightly-stage-c-2-gpu-mi350"}}
	if !reflect.DeepEqual(got.Suites, wantSuites) {
		t.Errorf("suites: wanted %v, got %v", wantSuites, got.Suites)
	}
	if want := []string{"nightly", "run-ci-all", "run-ci-blackwell-only", "run-ci-image"}; !reflect.DeepEqual(got.BroadScopes, want) {
		t.Errorf("broad scopes: wanted %q, got %q", want, got.BroadScopes)
	}
	if len(got.NoGPUPaths) != 0 || !reflect.DeepEqual(got.NoGPUPrefixes, []string{"docs/"}) || !reflect.DeepEqual(got.NoGPUSuffixes, []string{".md", ".mdx", ".rst"}) {
		t.Errorf("no-GPU paths: got %q %q %q", got.NoGPUPaths, got.NoGPUPrefixes, got.NoGPUSuffixes)
	}
	wantCrons := []Cron{{"0 14 * * 0-5", Nightly, []string{}}, {"0 14 * * 6", Weekly, []string{"run-ci-long"}}, {"0 3 * * *", Regular, []string{}}}
	if !reflect.DeepEqual(got.Crons, wantCrons) {
		t.Errorf("crons: wanted %v, got %v", wantCrons, got.Crons)
	}
	wp, err := ResolveTrigger(Trigger{Event: EventSchedule, Schedule: "0 14 * * 6", Tables: got})
	if err != nil || wp.Cadence != Weekly || !reflect.DeepEqual(wp.RawLabels, []string{"run-ci-long"}) {
		t.Errorf("schedule 0 14 * * 6: got %+v, %v", wp, err)
	}
	_, err = ResolveTrigger(Trigger{Event: EventSchedule, Schedule: "0 15 * * 6", Tables: got})
	if want := "No CI policy is defined for schedule: 0 15 * * 6; known crons are '0 14 * * 0-5' (nightly), '0 14 * * 6' (weekly) and '0 3 * * *' (regular)"; err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
	if got.Origin(TableSuites).String() != "tests/ci/run_suite.py:7" || got.elementOrigin(TableSuites, "stage-b-cpu") != "tests/ci/run_suite.py:8" {
		t.Errorf("wanted CI_SUITES at line 7 and stage-b-cpu at line 8, got %s and %s", got.Origin(TableSuites), got.elementOrigin(TableSuites, "stage-b-cpu"))
	}
}

// A table that is present but not of Miles' form is an error naming the
// file, the line and the table.
func TestTableErrors(t *testing.T) {
	tests := []struct {
		name, file, src, want string
	}{
		{"labels call", LabelsFile, "KNOWN_LABELS = load_labels()\n",
			`tests/ci/labels.py:1: KNOWN_LABELS must be a literal collection of strings, not a call of load_labels(); write e.g. frozenset({"a", "b"})`},
		{"labels comprehension", LabelsFile, "KNOWN_LABELS = {k: k for k in X}\n",
			`tests/ci/labels.py:1: KNOWN_LABELS is not a literal: line 1: a comprehension is not a literal; write it as a literal, as Miles does`},
		{"labels key not a string", LabelsFile, "KNOWN_LABELS = {\n    \"a\": \"x\",\n    1: \"y\",\n}\n",
			`tests/ci/labels.py:3: KNOWN_LABELS each key must be a string (or a module-level string constant), not a number`},
		{"labels merged", LabelsFile, "KNOWN_LABELS = {**BASE, \"a\": \"x\"}\n",
			`tests/ci/labels.py:1: KNOWN_LABELS is not a literal: line 1: an unpacked dict (**...) is not a literal; write it as a literal, as Miles does`},
		{"labels augmented", LabelsFile, "KNOWN_LABELS = {\"a\": \"x\"}\nKNOWN_LABELS |= {\"b\": \"y\"}\n",
			`tests/ci/labels.py:2: KNOWN_LABELS is changed by an augmented assignment; write the whole table as one literal`},
		{"labels not python", LabelsFile, "KNOWN_LABELS = {\n",
			`tests/ci/labels.py:1: is not valid Python: '{' was never closed; fix the syntax so that python can import it`},
		{"suites list", RunSuiteFile, "CI_SUITES = [\"stage-a-cpu\"]\n",
			`tests/ci/run_suite.py:1: CI_SUITES must be a dict of backend to suites, e.g. {HWBackend.CPU: ["stage-a-cpu"]}, not a list`},
		{"suites bad key", RunSuiteFile, "CI_SUITES = {\n    \"gpu\": [\"x\"],\n}\n",
			`tests/ci/run_suite.py:2: CI_SUITES has a key that is not a backend: a string; write HWBackend.CPU, HWBackend.CUDA or HWBackend.ROCM`},
		{"suites sum", RunSuiteFile, "CI_SUITES = {HWBackend.CPU: A + B}\n",
			`tests/ci/run_suite.py:1: CI_SUITES is not a literal: line 1: A + B is not a literal (an expression Python computes at import time); write it as a literal, as Miles does`},
		{"suites name not constant", RunSuiteFile, "CI_SUITES = {HWBackend.CPU: [STAGE]}\n",
			`tests/ci/run_suite.py:1: CI_SUITES each element must be a string (or a module-level string constant), not the name STAGE`},
		{"pr stages number", StageSelectionFile, "PR_GPU_STAGES = frozenset({\"a\", 2})\n",
			`tests/ci/stage_selection.py:1: PR_GPU_STAGES each element must be a string (or a module-level string constant), not a number`},
		{"prefixes dict", StageSelectionFile, "_NO_GPU_PATHS = \"docs\"\n",
			`tests/ci/stage_selection.py:1: _NO_GPU_PATHS must be a list, tuple or set of strings, not a string`},
		{"crons list", CIPolicyFile, "SCHEDULE_POLICIES = [\"0 15 * * 6\"]\n",
			`tests/ci/ci_policy.py:1: SCHEDULE_POLICIES must be a dict of cron to (cadence, labels), e.g. {"0 15 * * 0-5": (NIGHTLY_CADENCE, ())}, not a list`},
		{"crons bad value", CIPolicyFile, "SCHEDULE_POLICIES = {\n    \"0 15 * * 6\": None,\n}\n",
			`tests/ci/ci_policy.py:2: SCHEDULE_POLICIES maps '0 15 * * 6' to None; write (CADENCE, (LABEL, ...)), e.g. (NIGHTLY_CADENCE, ())`},
		{"crons cadence not constant", CIPolicyFile, "SCHEDULE_POLICIES = {\"0 15 * * 6\": (cadence(), ())}\n",
			`tests/ci/ci_policy.py:1: SCHEDULE_POLICIES the cadence of '0 15 * * 6' must be a string (or a module-level string constant), not a call of cadence()`},
		{"workflow not yaml", PRTestWorkflow, "jobs: [\n",
			`.github/workflows/pr-test.yml: is not valid YAML: line 1: did not find expected node content; fix it so that GitHub can load the workflow`},
		{"workflow job not mapping", PRTestWorkflow, "jobs:\n  stage-a-cpu: 3\n",
			`.github/workflows/pr-test.yml:2: stage-a-cpu must be a mapping (a job)`},
		{"workflow command unreadable", PRTestWorkflow, "jobs:\n  stage-a-cpu:\n    uses: ./.github/workflows/_run-cpu-ci.yml\n    with:\n      execute_command: python tests/ci/run_suite.py --hw cpu ${{ matrix.x\n",
			`.github/workflows/pr-test.yml:5: stage-a-cpu has a run_suite.py command miles-ci cannot read: an expression ${{ is never closed`},
		// GitHub Actions runs at most 256 jobs from one matrix: a bigger count
		// is no roster, and must not make plan --all plan without bound.
		{"workflow matrix too big", PRTestWorkflow, "jobs:\n  stage-a-cpu:\n    strategy:\n      matrix:\n        partition_id: ${{ fromJSON('[" + strings.Repeat("0,", 256) + "0]') }}\n    uses: ./.github/workflows/_run-cpu-ci.yml\n    with:\n      execute_command: python tests/ci/run_suite.py --hw cpu --suite stage-a-cpu --auto-partition-id ${{ matrix.partition_id }} --auto-partition-size ${{ strategy.job-total }}\n",
			`.github/workflows/pr-test.yml:2: stage-a-cpu makes more than 256 matrix jobs under cadence regular; GitHub Actions runs at most 256 jobs from one matrix, so make the matrix smaller`},
		{"workflow matrix product too big", PRTestWorkflow, "jobs:\n  stage-a-cpu:\n    strategy:\n      matrix:\n        a: [" + strings.Repeat("0,", 99) + "0]\n        b: [" + strings.Repeat("0,", 99) + "0]\n        c: [" + strings.Repeat("0,", 99) + "0]\n    uses: ./.github/workflows/_run-cpu-ci.yml\n    with:\n      execute_command: python tests/ci/run_suite.py --hw cpu --suite stage-a-cpu\n",
			`.github/workflows/pr-test.yml:2: stage-a-cpu makes more than 256 matrix jobs under cadence regular; GitHub Actions runs at most 256 jobs from one matrix, so make the matrix smaller`},
		// Issue 31: other axes (an anchors bomb among them) beside the
		// partition key multiply the jobs past the limit.
		{"workflow matrix axes beside the key too big", PRTestWorkflow, "x: &x [" + strings.Repeat("0,", 1999) + "0]\njobs:\n  stage-a-cpu:\n    strategy:\n      matrix:\n        partition_id: [0, 1]\n        a: *x\n        b: *x\n    uses: ./.github/workflows/_run-cpu-ci.yml\n    with:\n      execute_command: python tests/ci/run_suite.py --hw cpu --suite stage-a-cpu --auto-partition-id ${{ matrix.partition_id }} --auto-partition-size 2\n",
			`.github/workflows/pr-test.yml:3: stage-a-cpu makes more than 256 matrix jobs under cadence regular; GitHub Actions runs at most 256 jobs from one matrix, so make the matrix smaller`},
		{"workflow partition size too big", PRTestWorkflow, "jobs:\n  stage-a-cpu:\n    strategy:\n      matrix:\n        partition_id: [0, 1]\n    uses: ./.github/workflows/_run-cpu-ci.yml\n    with:\n      execute_command: python tests/ci/run_suite.py --hw cpu --suite stage-a-cpu --auto-partition-id ${{ matrix.partition_id }} --auto-partition-size 300\n",
			`.github/workflows/pr-test.yml:8: stage-a-cpu runs --auto-partition-size 300 under cadence regular; a stage has 1 to 256 shards (GitHub Actions runs at most 256 jobs from one matrix)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadTables(writeTree(t, map[string]string{tt.file: tt.src}))
			if err == nil || tableMessage(err) != tt.want {
				t.Errorf("wanted %q, got %v", tt.want, err)
			}
			if _, err := LoadRegistry(writeTree(t, map[string]string{tt.file: tt.src})); err == nil {
				t.Errorf("LoadRegistry must fail too")
			}
		})
	}
}

func TestTableFileBounded(t *testing.T) {
	root := writeTree(t, map[string]string{LabelsFile: "KNOWN_LABELS = {}\n" + strings.Repeat("#", maxTableFile)})
	_, err := LoadTables(root)
	if want := "tests/ci/labels.py: is 4194322 bytes, more than the 4 MiB (4194304 bytes) a CI table file may be; a CI table file is a few kB, check that it is the right file"; err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}

// The workflow forms Miles uses: cadence-dependent matrices, job-total,
// max-parallel expressions, job-level runs-on, step commands, a run
// workflow that shards its own suites.
func TestWorkflowForms(t *testing.T) {
	root := writeTree(t, map[string]string{
		PRTestWorkflow: `on:
  schedule:
    - cron: '0 15 * * 0-5'
jobs:
  resolve-ci-policy:
    runs-on: ubuntu-latest
  stage-c-8-gpu-h100:
    needs: [resolve-ci-policy]
    if: ${{ !contains(fromJSON(needs.resolve-ci-policy.outputs.skipped_stages || '[]'), 'stage-c-8-gpu-h100') }}
    strategy:
      max-parallel: 1
      matrix:
        partition_id: ${{ fromJSON(needs.resolve-ci-policy.outputs.cadence == 'regular' && '[0]' || '[0,1]') }}
    uses: ./.github/workflows/_run-ci.yml
    with:
      runs_on: '["h100", "8gpu"]'
      container_image: ${{ needs.resolve-ci-image.outputs.container_image }}
      execute_command: >-
        python tests/ci/run_suite.py --hw cuda --suite stage-c-8-gpu-h100
        --auto-partition-id ${{ matrix.partition_id }} --auto-partition-size ${{ strategy.job-total }}
  stage-b-cpu:
    runs-on: [self-hosted, cpu]
    container:
      image: python:3.11@sha256:0000
    steps:
      - uses: actions/checkout@v4
      - run: |
          python tests/ci/run_suite.py --hw=cpu --suite=stage-b-cpu
  stage-c-b200:
    needs: [resolve-ci-policy]
    if: |
      !contains(fromJSON(needs.resolve-ci-policy.outputs.skipped_stages || '[]'), 'stage-c-8-gpu-b200') ||
      !contains(fromJSON(needs.resolve-ci-policy.outputs.skipped_stages || '[]'), 'stage-c-4-gpu-b200')
    uses: ./.github/workflows/_run-ci-b200.yml
  stage-c-8-gpu-gfx942:
    uses: ./.github/workflows/_run-gpu.yml
    with:
      runs_on: '["self-hosted", "gfx942"]'
      container_image: ${{ needs.resolve-ci-image.outputs.container_image }}
      execute_command: >-
        python tests/ci/run_suite.py --hw cuda --suite stage-c-8-gpu-h100 --match-all-labels
  stage-b-2-gpu-h200:
    uses: ./.github/workflows/_run-gpu.yml
    with:
      container_image: ${{ needs.resolve-ci-image.outputs.container_image }}
      execute_command: python tests/ci/run_suite.py --hw cuda --suite stage-b-2-gpu-h200
`,
		// A pool workflow: a hosted planner first, then batches on runners the
		// planner picks, so the stage has no static runner labels.
		".github/workflows/_run-ci-b200.yml": `on: workflow_call
jobs:
  plan:
    runs-on: ubuntu-latest
    steps:
      - run: python -m tests.ci.pool_plan
  test:
    needs: plan
    strategy:
      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
    uses: ./.github/workflows/_run-batch.yml
`,
		// The job that runs the command is not the first one.
		".github/workflows/_run-gpu.yml": `on: workflow_call
jobs:
  notify:
    runs-on: ubuntu-latest
    steps:
      - run: echo start
  run:
    runs-on: [gpu-box]
    steps:
      - run: ${{ inputs.execute_command }} --list-only
`,
		RunSuiteFile: "CI_SUITES = {HWBackend.CPU: [\"stage-b-cpu\"], HWBackend.CUDA: [\"stage-c-8-gpu-h100\", \"stage-b-2-gpu-h200\", \"stage-c-8-gpu-b200\", \"stage-c-4-gpu-b200\"], HWBackend.ROCM: [\"nightly-x\"]}\n",
	})
	got, err := LoadTables(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{
		{Name: "stage-c-8-gpu-h100", Backend: CUDA, RunsOn: []string{"h100", "8gpu"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1,
			ByCadence: &CadenceCounts{Shards: map[Cadence]int{Regular: 1, Nightly: 2, Weekly: 2, Release: 2}, MaxParallel: map[Cadence]int{Regular: 1, Nightly: 1, Weekly: 1, Release: 1}},
			Needs:     []string{"resolve-ci-policy"}, Image: ImageMiles, SkipGated: true, Job: "stage-c-8-gpu-h100", Source: ".github/workflows/pr-test.yml:7"},
		{Name: "stage-b-cpu", Backend: CPU, RunsOn: []string{"self-hosted", "cpu"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, Needs: []string{}, Image: "python",
			Job: "stage-b-cpu", Source: ".github/workflows/pr-test.yml:21"},
		{Name: "stage-c-8-gpu-b200", Backend: CUDA, RunsOn: []string{}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, Needs: []string{"resolve-ci-policy"}, SkipGated: true, Job: "stage-c-b200", Source: ".github/workflows/pr-test.yml:29"},
		{Name: "stage-c-4-gpu-b200", Backend: CUDA, RunsOn: []string{}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, Needs: []string{"resolve-ci-policy"}, SkipGated: true, Job: "stage-c-b200", Source: ".github/workflows/pr-test.yml:29"},
		{Name: "stage-c-8-gpu-h100", Backend: CUDA, RunsOn: []string{"self-hosted", "gfx942"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, Needs: []string{}, Image: ImageMiles, Job: "stage-c-8-gpu-gfx942", Source: ".github/workflows/pr-test.yml:35"},
		{Name: "stage-b-2-gpu-h200", Backend: CUDA, RunsOn: []string{"gpu-box"}, Shards: 1, MaxParallel: 1, MaxParallelWeekly: 1, Needs: []string{}, Image: ImageMiles, Job: "stage-b-2-gpu-h200", Source: ".github/workflows/pr-test.yml:42"},
		{Name: "nightly-x", Backend: ROCM, RunsOn: []string{}, Needs: []string{}, External: true, Source: "tests/ci/run_suite.py:1"},
	}
	if !reflect.DeepEqual(got.Roster, want) {
		t.Errorf("roster:\nwanted %+v\ngot    %+v", want, got.Roster)
	}
	if st, _ := got.Stage("stage-c-8-gpu-h100"); st.ShardsFor(Nightly) != 2 || st.ShardsFor(Regular) != 1 {
		t.Errorf("wanted 1 regular and 2 nightly shards, got %d and %d", st.ShardsFor(Regular), st.ShardsFor(Nightly))
	}
	// A job that runs another stage's suite on other runners (Miles' early
	// ROCm job ran the H100 suite) is no fault by itself.
	if len(got.workflow.drift) != 0 {
		t.Errorf("wanted no job faults, got %v", got.workflow.drift)
	}
	if !reflect.DeepEqual(got.workflow.crons, []located{{"0 15 * * 0-5", PRTestWorkflow, 3}}) {
		t.Errorf("crons: got %v", got.workflow.crons)
	}
}

func TestEvalExpr(t *testing.T) {
	vars := func(p string) (any, bool) {
		if p == "needs.p.outputs.cadence" {
			return "Weekly", true
		}
		return nil, false
	}
	tests := []struct {
		expr string
		want any
	}{
		{"needs.p.outputs.cadence == 'weekly' && 1 || 2", 1.0},
		{"needs.p.outputs.cadence != 'weekly' && 1 || 2", 2.0},
		{"fromJSON(needs.p.outputs.cadence == 'regular' && '[0]' || '[0,1]')", []any{0.0, 1.0}},
		{"!(1 == '1')", false},
		{"'it''s'", "it's"},
		{"null || 0 || 'x'", "x"},
	}
	for _, tt := range tests {
		got, err := evalExpr(tt.expr, vars)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: wanted %v, got %v (%v)", tt.expr, tt.want, got, err)
		}
	}
	for _, bad := range []string{"github.event_name == 'x'", "format('{0}', 1)", "(1", "'x", strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200)} {
		if _, err := evalExpr(bad, vars); err == nil {
			t.Errorf("%q: wanted an error", bad)
		}
	}
}

// lintTree is testdata/miles' tables with one change; base files are the
// clean tree's.
func lintOf(t *testing.T, files map[string]string) []Drift {
	t.Helper()
	base := filepath.Join("..", "testdata", "miles")
	tree := map[string]string{}
	for _, rel := range []string{LabelsFile, StageSelectionFile, CIPolicyFile, PRTestWorkflow, PRTestROCmWorkflow, ".github/workflows/_run-cpu-ci.yml"} {
		data, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		tree[rel] = string(data)
	}
	for rel, c := range files {
		tree[rel] = c
	}
	root := writeTree(t, tree)
	// One test per suite and label keeps the tree clean.
	for i, l := range KnownLabels {
		suite := []string{"stage-b-2-gpu-h200", "stage-c-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200"}[i%5]
		testfiles.Write(t, root, "tests/e2e/test_"+strings.ReplaceAll(l, "-", "_")+".py", `register_cuda_ci(est_time=1, suite="`+suite+`", labels=["`+l+`"])`+"\n")
	}
	testfiles.Write(t, root, "tests/e2e/test_rocm.py", `register_rocm_ci(est_time=1, suite="stage-c-4-gpu-mi350", labels=["amd"])
register_rocm_ci(est_time=1, suite="nightly-stage-c-2-gpu-mi350", labels=["amd"])
register_rocm_ci(est_time=1, suite="nightly-stage-c-4-gpu-mi350", labels=["amd"])
register_rocm_ci(est_time=1, suite="nightly-stage-c-8-gpu-mi350", labels=["amd"])
`)
	testfiles.Write(t, root, "tests/fast/test_a.py", "import os\n")
	testfiles.Write(t, root, "tests/ci/test_b.py", `register_cpu_ci(est_time=1, suite="stage-b-cpu")`+"\n")
	for rel, c := range files {
		if strings.HasPrefix(rel, "tests/") && strings.Contains(rel, "/test_") {
			testfiles.Write(t, root, rel, c)
		}
	}
	reg, err := LoadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	return Lint(reg)
}

func readTestdata(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "miles", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Each kind of drift, on a tree that is clean but for one change.
func TestLintKinds(t *testing.T) {
	if d := lintOf(t, nil); len(d) != 0 {
		t.Fatalf("the base tree must lint clean, got %v", d)
	}
	prTest := readTestdata(t, PRTestWorkflow)
	rocm := readTestdata(t, PRTestROCmWorkflow)
	runSuite := `CI_SUITES = {
    HWBackend.CPU: ["stage-a-cpu", "stage-b-cpu"],
    HWBackend.CUDA: ["stage-b-2-gpu-h200", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200", "stage-c-4-gpu-h200", "stage-c-2-gpu-h200", "stage-c-8-gpu-b300"],
    HWBackend.ROCM: ["stage-c-4-gpu-mi350", "nightly-stage-c-8-gpu-mi350", "nightly-stage-c-4-gpu-mi350", "nightly-stage-c-2-gpu-mi350"],
}
`
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"suite without job and without tests", map[string]string{RunSuiteFile: runSuite}, []string{
			`tests/ci/run_suite.py:3: suite-without-job: suite stage-c-8-gpu-b300 (cuda) is in CI_SUITES but none of the stage jobs of .github/workflows/pr-test.yml and .github/workflows/pr-test-rocm.yml runs it, so its tests never run; add a stage job stage-c-8-gpu-b300, or drop the suite`,
			`tests/ci/run_suite.py:3: suite-without-tests: suite stage-c-8-gpu-b300 (cuda) is in CI_SUITES but no test registers it; register a test with suite="stage-c-8-gpu-b300" or drop the suite`,
		}},
		{"job flags differ from matrix", map[string]string{PRTestWorkflow: strings.Replace(prTest, "--auto-partition-size 3", "--auto-partition-size 4", 1)}, []string{
			`.github/workflows/pr-test.yml:124: job-mismatch: job stage-c-4-gpu-h200 runs --auto-partition-size 4 but its matrix has 3 job(s) under every cadence: shards and matrix jobs must match`,
		}},
		{"size matches the matrix only for one cadence", map[string]string{PRTestWorkflow: strings.Replace(prTest, "partition_id: [0, 1, 2]", "partition_id: ${{ fromJSON(needs.policy.outputs.cadence == 'weekly' && '[0,1,2]' || '[0]') }}", 1)}, []string{
			`.github/workflows/pr-test.yml:124: job-mismatch: job stage-c-4-gpu-h200 runs --auto-partition-size 3 but its matrix has 1 job(s) for cadence regular, nightly, release: shards and matrix jobs must match`,
		}},
		{"job suite differs from its name and hw", map[string]string{PRTestWorkflow: strings.Replace(prTest, "--hw cuda --suite stage-c-8-gpu-h200", "--hw rocm --suite stage-c-8-gpu-h200", 1)}, []string{
			`.github/workflows/pr-test.yml:157: job-mismatch: stage stage-c-8-gpu-h200 runs --hw rocm --suite stage-c-8-gpu-h200, which CI_SUITES does not list for rocm: run_suite.py fails with "Unknown suite"; add the suite to CI_SUITES or fix the flags`,
			`built-in: suite-without-job: suite stage-c-8-gpu-h200 (cuda) is in CI_SUITES but none of the stage jobs of .github/workflows/pr-test.yml and .github/workflows/pr-test-rocm.yml runs it, so its tests never run; add a stage job stage-c-8-gpu-h200, or drop the suite`,
			`tests/e2e/test_short.py:1: test-without-job: register_cuda_ci(suite="stage-c-8-gpu-h200") never runs: no stage job runs it; register it for a suite a stage job runs`,
			`tests/e2e/test_replay.py:1: test-without-job: register_cuda_ci(suite="stage-c-8-gpu-h200") never runs: no stage job runs it; register it for a suite a stage job runs`,
			`tests/e2e/test_precision.py:1: test-without-job: register_cuda_ci(suite="stage-c-8-gpu-h200") never runs: no stage job runs it; register it for a suite a stage job runs`,
		}},
		{"PR GPU stage without gate", map[string]string{PRTestROCmWorkflow: strings.Replace(rocm, "    if: ${{ !contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), 'stage-c-4-gpu-mi350') }}\n", "", 1)}, []string{
			`.github/workflows/pr-test-rocm.yml:51: ungated-pr-stage: stage stage-c-4-gpu-mi350 is a PR GPU stage but its job has no skipped_stages gate, so it runs even when the policy skips it; add !contains(fromJSON(needs.resolve-ci-policy.outputs.skipped_stages || '[]'), 'stage-c-4-gpu-mi350') to its if:`,
		}},
		{"test registered to a suite no job runs", map[string]string{"tests/e2e/test_b300.py": `register_cuda_ci(est_time=1, suite="stage-d-8-gpu-b300", labels=["long"])` + "\n"}, []string{
			`tests/e2e/test_b300.py:1: test-without-job: register_cuda_ci(suite="stage-d-8-gpu-b300") never runs: it is not a cuda suite of CI_SUITES (stage-b-2-gpu-h200, stage-c-8-gpu-h100, stage-c-8-gpu-h200, stage-c-4-gpu-h200, stage-c-2-gpu-h200); register it for a suite a stage job runs`,
		}},
		{"test of a backend with no suites", map[string]string{RunSuiteFile: strings.NewReplacer(`, "stage-c-8-gpu-b300"`, "",
			`["stage-c-4-gpu-mi350", "nightly-stage-c-8-gpu-mi350", "nightly-stage-c-4-gpu-mi350", "nightly-stage-c-2-gpu-mi350"]`, "[]").Replace(runSuite)}, []string{
			`.github/workflows/pr-test-rocm.yml:51: job-mismatch: stage stage-c-4-gpu-mi350 runs --hw rocm --suite stage-c-4-gpu-mi350, which CI_SUITES does not list for rocm: run_suite.py fails with "Unknown suite"; add the suite to CI_SUITES or fix the flags`,
			`tests/e2e/test_rocm.py:2: test-without-job: register_rocm_ci(suite="nightly-stage-c-2-gpu-mi350") never runs: it is not a rocm suite of CI_SUITES (it has none); register it for a suite a stage job runs`,
			`tests/e2e/test_rocm.py:3: test-without-job: register_rocm_ci(suite="nightly-stage-c-4-gpu-mi350") never runs: it is not a rocm suite of CI_SUITES (it has none); register it for a suite a stage job runs`,
			`tests/e2e/test_rocm.py:4: test-without-job: register_rocm_ci(suite="nightly-stage-c-8-gpu-mi350") never runs: it is not a rocm suite of CI_SUITES (it has none); register it for a suite a stage job runs`,
		}},
		{"label no test uses", map[string]string{LabelsFile: strings.Replace(readTestdata(t, LabelsFile), `    "amd": "AMD ROCm stage",`, `    "amd": "AMD ROCm stage",
    "deploy": "split deployment",`, 1)}, []string{
			`tests/ci/labels.py:27: unused-label: label deploy is in KNOWN_LABELS but no test uses it, so run-ci-deploy selects nothing; label a test with it or drop it`,
		}},
		{"cron without policy", map[string]string{PRTestWorkflow: strings.Replace(prTest, "- cron: '0 15 * * 6'", "- cron: '0 16 * * 6'", 1)}, []string{
			`.github/workflows/pr-test.yml:9: cron-without-policy: schedule cron "0 16 * * 6" has no entry in SCHEDULE_POLICIES (tests/ci/ci_policy.py:10), so every scheduled run fails closed; add it there with its cadence`,
		}},
		{"matrix without partition flags", map[string]string{PRTestWorkflow: strings.Replace(prTest, "--auto-partition-id ${{ matrix.partition_id }} --auto-partition-size 4\n", "", 1)}, []string{
			`.github/workflows/pr-test.yml:46: job-mismatch: job stage-a-cpu has 4 matrix jobs but runs run_suite.py without --auto-partition-id/--auto-partition-size: every job runs the whole suite`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range lintOf(t, tt.files) {
				got = append(got, d.String())
			}
			want := slices.Clone(tt.want)
			slices.Sort(want)
			gotSorted := slices.Clone(got)
			slices.Sort(gotSorted)
			if !reflect.DeepEqual(gotSorted, want) {
				t.Errorf("wanted:\n%s\ngot:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
}

// testdata/miles-like is written like the real Miles and lints clean.
func TestMilesLikeTreeLintsClean(t *testing.T) {
	reg, err := LoadRegistry(filepath.Join("..", "testdata", "miles-like"))
	if err != nil {
		t.Fatal(err)
	}
	if d := Lint(reg); len(d) != 0 {
		t.Errorf("wanted no drift, got %v", d)
	}
	for _, o := range reg.Tables.Origins {
		if o.Builtin() {
			t.Errorf("table %s: wanted it read from the tree", o.Table)
		}
	}
	st, _ := reg.Tables.Stage("stage-c-8-gpu-h100")
	if st.ShardsFor(Regular) != 1 || st.ShardsFor(Weekly) != 2 || st.Job != "stage-c-8-gpu-h100" || !st.SkipGated || !st.FastFailGated {
		t.Errorf("stage-c-8-gpu-h100: got %+v", st)
	}
	// The ROCm stage is gated through the image job it needs.
	if st, _ := reg.Tables.Stage("stage-c-4-gpu-mi350"); !st.SkipGated || st.FastFailGated || st.Image != ImageROCm {
		t.Errorf("stage-c-4-gpu-mi350: got %+v", st)
	}
	p, err := BuildPlan(reg, PlanRequest{HW: CUDA, Suite: "stage-c-8-gpu-h100", Cadence: Nightly, Partition: &Partition{ID: 1, Size: st.ShardsFor(Nightly)}})
	if err != nil || len(p.Enabled) != 1 || p.Enabled[0].File != "tests/e2e/megatron/test_rollout.py" {
		t.Errorf("nightly shard 1/2: got %+v, %v", p, err)
	}
}

// TestExprIntBounds: a count read from a workflow is a small whole number
// whether the expression gives a number or a string.
func TestExprIntBounds(t *testing.T) {
	tests := []struct {
		word    string
		want    int
		wantErr string
	}{
		{"3", 3, ""},
		{"${{ '12' }}", 12, ""},
		{"${{ '-5' }}", 0, "${{ '-5' }} is not a small whole number"},
		{"${{ '99999999999' }}", 0, "${{ '99999999999' }} is not a small whole number"},
		{"-5", 0, "-5 is not a small whole number"},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			got, err := exprInt(tt.word, Regular, 0)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.wantErr {
				t.Errorf("wanted %d, %q, got %d, %q", tt.want, tt.wantErr, got, gotErr)
			}
		})
	}
}

// TestCheckSuiteNoSuites: a backend whose CI_SUITES list is empty says so
// instead of listing nothing.
func TestCheckSuiteNoSuites(t *testing.T) {
	tables, err := LoadTables(writeTree(t, map[string]string{RunSuiteFile: "CI_SUITES = {}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	want := "Unknown suite stage-a-cpu for backend CPU; CI_SUITES lists no cpu suite"
	if err := tables.CheckSuite(CPU, "stage-a-cpu"); err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
}

// tableMessage is the TableError's own message of err: a table in a form
// miles-ci cannot read comes as an *AheadError (rules §11.7), which must say
// so and name the way out after it.
func tableMessage(err error) string {
	var ae *AheadError
	if !errors.As(err, &ae) {
		return err.Error()
	}
	msg, ok := strings.CutSuffix(err.Error(), "; this checkout's CI is ahead of miles-ci: "+aheadWayOut)
	if !ok || ae.Err == nil {
		return "an ahead error without its table fault: " + err.Error()
	}
	return msg
}
