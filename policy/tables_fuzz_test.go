package policy

import (
	"github.com/radixark/miles-ci/internal/testfiles"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzTableFile feeds any source to the Python table reader as each of the
// four table files: it must return tables or an error, never panic or hang.
func FuzzTableFile(f *testing.F) {
	for _, rel := range []string{LabelsFile, StageSelectionFile, CIPolicyFile} {
		if data, err := os.ReadFile(filepath.Join("..", "testdata", "miles", filepath.FromSlash(rel))); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("CI_SUITES = {HWBackend.CPU: [A, \"b\"], \"cuda\": (\"c\",)}\nA = 'a'\n")
	f.Add("SCHEDULE_POLICIES: dict[str, tuple] = {X: (Y, ()), 'c': 'nightly'}\nX = Y = 'x'\n")
	f.Add("PR_GPU_STAGES = frozenset({*A}); _NO_GPU_PREFIXES = 'docs/'\nKNOWN_LABELS = {**B}\n")
	f.Add("from tests.ci.x import A as B, C\nA = {\"k\": S(1, (\"x\",))}\nC = [B, B]\nCI_SUITES = {\"cuda\": sorted(B), \"cpu\": list(C)}\n")
	f.Fuzz(func(t *testing.T, src string) {
		m, err := parsePyModule("tests/ci/x.py", []byte(src))
		if err != nil {
			return
		}
		// The module may import from itself (tests.ci.x): names then resolve
		// across "modules", cycles included.
		m.mods = newPyModules("")
		m.mods.read["tests/ci/x.py"] = m
		for _, read := range []func(*Tables, *pyModule) error{
			(*Tables).readLabels, (*Tables).readSuites, (*Tables).readStageSelection, (*Tables).readCrons,
		} {
			tb := BuiltinTables()
			if err := read(tb, m); err != nil {
				continue
			}
			names := tb.KnownLabels()
			slices.Sort(names)
			if len(slices.Compact(names)) != len(tb.Labels) {
				t.Errorf("labels repeat: %v", tb.Labels)
			}
		}
	})
}

// FuzzWorkflow feeds any YAML to the workflow reader: it must return a
// roster or an error, never panic or hang.
func FuzzWorkflow(f *testing.F) {
	for _, rel := range []string{PRTestWorkflow, PRTestROCmWorkflow} {
		if data, err := os.ReadFile(filepath.Join("..", "testdata", "miles", filepath.FromSlash(rel))); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("jobs:\n  a: &x\n    uses: ./.github/workflows/_run-b.yml\n    if: contains(fromJSON(needs.p.outputs.skipped_stages), 's')\n  b: *x\n"))
	f.Add([]byte("jobs:\n  s:\n    strategy:\n      max-parallel: ${{ (((1 \n      matrix: {p: '${{ fromJSON(''[1'') }}'}\n    with: {execute_command: 'run_suite.py --auto-partition-id ${{ matrix.p }} --auto-partition-size ${{ strategy.job-total }}'}\n"))
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &workflowReader{root: root, rel: PRTestWorkflow, image: ImageMiles, tables: BuiltinTables()}
		rows, err := r.read(decodeWorkflow(data, nil))
		if err != nil && rows != nil {
			t.Errorf("rows with an error: %v", err)
		}
	})
}

// FuzzRunWorkflow feeds the run-workflow reader (rules §11.6) any YAML, as
// _run-ci.yml and _run-ci-rocm.yml: it must not panic, and the stage env it
// reads must evaluate for any runner labels.
func FuzzRunWorkflow(f *testing.F) {
	for _, rel := range []string{RunCIWorkflow, RunCIROCmWorkflow} {
		if data, err := os.ReadFile(filepath.Join("..", "testdata", "miles-gpugen", filepath.FromSlash(rel))); err == nil {
			f.Add(data, true)
		}
	}
	f.Add([]byte("jobs:\n  run:\n    steps:\n      - run: ${{ inputs.execute_command }}\n      - if: contains(fromJSON(inputs.runs_on), 'h200'\n        run: echo \"X=1\" >> \"$GITHUB_ENV\"\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, rocm bool) {
		rel := RunCIWorkflow
		if rocm {
			rel = RunCIROCmWorkflow
		}
		root := t.TempDir()
		testfiles.Write(t, root, rel, string(data))
		tb := BuiltinTables()
		if err := tb.readRunSteps(root, nil); err != nil {
			return
		}
		tb.RunSteps.StageEnvFor([]string{"h200", "4gpu"})
	})
}

// FuzzHardware feeds tests/ci/hardware.py readers any Python.
func FuzzHardware(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("..", "testdata", "miles-gpugen", filepath.FromSlash(HardwareFile))); err == nil {
		f.Add(string(data))
	}
	f.Add("KNOWN_ARCHES = ('a',)\nCUDA_STAGE_ARCH = {'s': 'a', 's': B}\n")
	f.Fuzz(func(t *testing.T, src string) {
		m, err := parsePyModule(HardwareFile, []byte(src))
		if err != nil {
			return
		}
		m.mods = newPyModules("")
		m.mods.read[HardwareFile] = m
		tb := BuiltinTables()
		if err := tb.readHardware(m); err != nil {
			return
		}
		for _, s := range tb.CUDAStages {
			for _, a := range tb.Arches {
				tb.TargetStage(s.Name, a)
			}
		}
	})
}
