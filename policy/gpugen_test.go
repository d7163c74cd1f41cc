package policy

import (
	"errors"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The GPU-generation rule set (rules §11) on testdata/miles-gpugen and on
// small trees that change one file of it.

const gpugenRoot = "../testdata/miles-gpugen"

func gpugenRegistry(t *testing.T) *Registry {
	t.Helper()
	reg, err := LoadRegistry(gpugenRoot)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestGPUGenTables(t *testing.T) {
	tables, err := LoadTables(gpugenRoot)
	if err != nil {
		t.Fatal(err)
	}
	if tables.Rules != RulesGPUGen {
		t.Errorf("rules %q, want %q", tables.Rules, RulesGPUGen)
	}
	if !reflect.DeepEqual(tables.Arches, []string{"hopper", "blackwell"}) {
		t.Errorf("arches %v", tables.Arches)
	}
	// CI_SUITES[CUDA] is list(CUDA_STAGES), in its order (rules §11.1).
	want := []string{"stage-b-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-8-gpu-h200", "stage-c-8-gpu-h200-rdma", "stage-c-8-gpu-b200"}
	if !reflect.DeepEqual(tables.Suites.CUDA, want) {
		t.Errorf("CUDA suites %v, want %v", tables.Suites.CUDA, want)
	}
	rdma, _ := tables.cudaStage("stage-c-8-gpu-h200-rdma")
	if !reflect.DeepEqual(rdma.Capabilities(), []string{"rdma"}) || rdma.NumGPUs != 8 || rdma.Arch != "hopper" {
		t.Errorf("rdma stage %+v", rdma)
	}
	if f := tables.Forms; !f.NeedsCUDAImage || !f.UnusableDiffSkipsUnrunnable || !f.HasTestsOutput {
		t.Errorf("forms %+v", f)
	}
	if !slices.Contains(tables.KnownKeywords(), "hardware") {
		t.Errorf("keywords %v", tables.KnownKeywords())
	}
	// The 31f1ca9 tree keeps its rules.
	base, err := LoadTables("../testdata/miles")
	if err != nil {
		t.Fatal(err)
	}
	if base.Rules != RulesBase || len(base.Arches) != 0 || base.Forms != (Forms{}) {
		t.Errorf("testdata/miles: rules %q arches %v forms %+v", base.Rules, base.Arches, base.Forms)
	}
}

// gpugenTree is testdata/miles-gpugen's tests/ci with extra files.
func gpugenTree(t *testing.T, extra map[string]string) string {
	t.Helper()
	files := map[string]string{}
	for _, f := range []string{HardwareFile, LabelsFile, CIRegisterFile, RunSuiteFile, StageSelectionFile, CIPolicyFile} {
		files[f] = string(mustRead(t, gpugenRoot+"/"+f))
	}
	maps.Copy(files, extra)
	return writeTree(t, files)
}

func TestGPUGenRegistrationErrors(t *testing.T) {
	const imp = "from tests.ci.ci_register import register_cuda_ci, register_cpu_ci, register_rocm_ci\n"
	tests := []struct{ name, call, want string }{
		{"empty hardware", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=["short"], hardware=[])`,
			"hardware in register_cuda_ci() must list at least one arch from ['hopper', 'blackwell']"},
		{"missing hardware", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=["short"])`,
			"hardware in register_cuda_ci() must list at least one arch from ['hopper', 'blackwell']"},
		{"hardware None", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=["short"], hardware=None)`,
			"hardware in register_cuda_ci() must list at least one arch from ['hopper', 'blackwell']"},
		{"unknown arch", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=["short"], hardware=["hopper", "ampere"])`,
			"unknown arches ['ampere'] in register_cuda_ci(); valid arches: ['hopper', 'blackwell']"},
		{"duplicated arch", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=["short"], hardware=["hopper", "hopper"])`,
			"duplicated arch in register_cuda_ci() hardware=['hopper', 'hopper']"},
		{"not a CUDA stage", `register_cuda_ci(est_time=1, suite="stage-a-cpu", labels=["short"], hardware=["hopper"])`,
			"unknown CUDA suite 'stage-a-cpu' in register_cuda_ci(); valid suites: ['stage-b-2-gpu-h200', 'stage-c-4-gpu-h200', 'stage-c-8-gpu-b200', 'stage-c-8-gpu-h200', 'stage-c-8-gpu-h200-rdma']"},
		{"home off its first arch", `register_cuda_ci(est_time=1, suite="stage-c-8-gpu-b200", labels=["short"], hardware=["hopper", "blackwell"])`,
			"suite 'stage-c-8-gpu-b200' is blackwell but hardware=['hopper', 'blackwell'] runs on hopper by default; a test's home stage must be on its first supported arch"},
		{"hardware on CPU", `register_cpu_ci(est_time=1, suite="stage-a-cpu", hardware=["hopper"])`,
			"hardware in register_cpu_ci() is CUDA-only; CPU has no GPU generation and ROCm is a separate backend"},
		{"hardware on ROCm", `register_rocm_ci(est_time=1, suite="stage-c-4-gpu-mi350", labels=["short"], hardware=["hopper"])`,
			"hardware in register_rocm_ci() is CUDA-only; CPU has no GPU generation and ROCm is a separate backend"},
		{"hardware not a list", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=["short"], hardware="hopper")`,
			"hardware in register_cuda_ci() must be a list of string literals or None (got Constant)"},
		// Order (rules §11.2): labels, nightly and disabled before hardware; hardware before unknown labels.
		{"labels first", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=[], hardware=[])`,
			"labels in register_cuda_ci() must contain at least one domain label"},
		{"nightly first", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=["short"], nightly=1, hardware=[])`,
			"nightly must be a boolean in register_cuda_ci()"},
		{"hardware before labels", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=["nope"], hardware=[])`,
			"hardware in register_cuda_ci() must list at least one arch from ['hopper', 'blackwell']"},
		{"keyword outside _VALID_KWARGS", `register_cuda_ci(est_time=1, suite="stage-c-4-gpu-h200", labels=["short"], hardware=["hopper"], gpus=8)`,
			"unknown argument 'gpus' in register_cuda_ci()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := gpugenTree(t, map[string]string{"tests/e2e/test_x.py": imp + tt.call + "\n"})
			_, err := LoadRegistry(root)
			var re *RegistryError
			if !errors.As(err, &re) {
				t.Fatalf("wanted a registry error, got %v", err)
			}
			if re.Msg != tt.want || re.File != "tests/e2e/test_x.py" || re.Line != 2 {
				t.Errorf("got %s:%d %q\nwant %q", re.File, re.Line, re.Msg, tt.want)
			}
		})
	}
}

// A keyword the checkout's _VALID_KWARGS accepts but no rule set knows is
// miles-ci lagging the checkout (rules §11.7), not a broken test.
func TestAheadKeyword(t *testing.T) {
	register := strings.Replace(string(mustRead(t, gpugenRoot+"/"+CIRegisterFile)), `"hardware"})`, `"hardware", "num_gpus"})`, 1)
	root := gpugenTree(t, map[string]string{
		CIRegisterFile:        register,
		"tests/e2e/test_x.py": "from tests.ci.ci_register import register_cuda_ci\n\n\nregister_cuda_ci(est_time=1, suite=\"stage-c-8-gpu-b200\", labels=[\"short\"], hardware=[\"blackwell\"], num_gpus=1)\n",
	})
	_, err := LoadRegistry(root)
	var ae *AheadError
	if !errors.As(err, &ae) {
		t.Fatalf("wanted an AheadError, got %v", err)
	}
	want := "this checkout's CI accepts 'num_gpus', which miles-ci does not know yet; plan with --planner checkout (the checkout's own tests/ci code), or update miles-ci (a registration keyword of tests/ci/ci_register.py:4 _VALID_KWARGS)"
	if ae.File != "tests/e2e/test_x.py" || ae.Line != 4 || err.Error() != want {
		t.Errorf("got %s:%d %q", ae.File, ae.Line, err)
	}
	var re *RegistryError
	if errors.As(err, &re) {
		t.Errorf("an ahead checkout must not be a registry error: %v", re)
	}
	// The same keyword in the 31f1ca9 form, where _VALID_KWARGS lacks it, is the test's error.
	_, err = LoadRegistry(writeTree(t, map[string]string{
		CIRegisterFile:        "_VALID_KWARGS = frozenset({\"est_time\", \"suite\", \"labels\", \"nightly\", \"disabled\"})\n",
		"tests/e2e/test_x.py": "register_cuda_ci(est_time=1, suite=\"stage-c-2-gpu-h200\", labels=[\"short\"], hardware=[\"hopper\"])\n",
	}))
	if !errors.As(err, &re) || re.Msg != "unknown argument 'hardware' in register_cuda_ci()" || re.Fix != "valid arguments are est_time, suite, labels, nightly and disabled" {
		t.Errorf("wanted the test's own error, got %v", err)
	}
}

// A CUDA_STAGES entry miles-ci cannot read is a table ahead of it.
func TestAheadTable(t *testing.T) {
	root := gpugenTree(t, map[string]string{HardwareFile: "KNOWN_ARCHES = (\"hopper\",)\nCUDA_STAGES = {\"s\": CudaStage(arch=\"hopper\", num_gpus=2, runs_on=(\"h200\", \"2gpu\"))}\n"})
	_, err := LoadTables(root)
	var ae *AheadError
	if !errors.As(err, &ae) || ae.File != HardwareFile || ae.Line != 2 || !strings.HasSuffix(err.Error(), "; this checkout's CI is ahead of miles-ci: "+aheadWayOut) {
		t.Fatalf("wanted an ahead table error on tests/ci/hardware.py:2, got %v", err)
	}
}

func TestGPUGenPolicy(t *testing.T) {
	tables, err := LoadTables(gpugenRoot)
	if err != nil {
		t.Fatal(err)
	}
	all := tables.KnownLabels()
	tests := []struct {
		name     string
		cadence  Cadence
		raw      []string
		include  []string
		dispatch []string
		absorb   bool
	}{
		{"run-on is workflow-only", Regular, []string{"run-on-blackwell"}, []string{}, []string{"blackwell"}, true},
		{"both run-on", Regular, []string{"run-on-hopper", "run-on-blackwell", "run-ci-short"}, []string{"short"}, []string{"hopper", "blackwell"}, true},
		{"unknown arch is a warning", Regular, []string{"run-on-ampere"}, []string{}, nil, false},
		{"blackwell-only scope", Regular, []string{"run-ci-blackwell-only"}, all, []string{"blackwell"}, false},
		{"blackwell-only over image", Regular, []string{"run-ci-blackwell-only", "run-ci-image"}, all, []string{"blackwell"}, false},
		{"nightly over blackwell-only", Nightly, []string{"run-ci-blackwell-only"}, without(all, "long", "ft-long"), []string{"blackwell"}, false},
		{"run-on wins the arch over blackwell-only", Regular, []string{"run-ci-blackwell-only", "run-on-hopper"}, all, []string{"hopper"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rp, err := tables.ResolveRunPolicy(tt.cadence, tt.raw, false)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rp.IncludeLabels, sortedCopy(tt.include)) || !reflect.DeepEqual(rp.DispatchArches, tt.dispatch) || rp.Absorb != tt.absorb {
				t.Errorf("got include %v dispatch %v absorb %t", rp.IncludeLabels, rp.DispatchArches, rp.Absorb)
			}
			warned := len(rp.Warnings) > 0
			if warned != (tt.name == "unknown arch is a warning") {
				t.Errorf("warnings %v", rp.Warnings)
			}
		})
	}
	// The PR label filter keeps run-on-<arch> labels (they lack the run-ci- prefix).
	wp, err := ResolveTrigger(Trigger{Event: EventPullRequest, PRLabelsJSON: `["run-on-blackwell","run-on-ampere","bug","run-ci-blackwell-only"]`, Tables: tables})
	if err != nil || !reflect.DeepEqual(wp.RawLabels, []string{"run-on-blackwell", "run-ci-blackwell-only"}) {
		t.Errorf("raw labels %v, %v", wp.RawLabels, err)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	if c == nil {
		c = []string{}
	}
	return c
}

// Dispatch (rules §11.4) as listing sees it: which files each stage plans.
func TestGPUGenDispatch(t *testing.T) {
	reg := gpugenRegistry(t)
	files := func(suite string, raw ...string) []string {
		p, err := BuildPlan(reg, PlanRequest{HW: CUDA, Suite: suite, Cadence: Regular, Labels: append(raw, "run-ci-all")})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range p.Enabled {
			out = append(out, strings.TrimPrefix(e.File, "tests/e2e/"))
		}
		return out
	}
	tests := []struct {
		name, suite string
		raw         []string
		want        []string
	}{
		{"auto: b200 runs its home tests", "stage-c-8-gpu-b200", nil, []string{"short/test_blackwell_only.py"}},
		{"auto: hopper home stage", "stage-c-4-gpu-h200", nil, []string{"megatron/test_portable_four.py", "short/test_both_backends.py", "short/test_hopper_only.py"}},
		// run-on-blackwell absorbs every portable test onto the smallest fitting
		// Blackwell stage, but never a test homed on a capability b200 lacks.
		{"run-on-blackwell absorbs", "stage-c-8-gpu-b200", []string{"run-on-blackwell"}, []string{"megatron/test_portable_big.py", "megatron/test_portable_four.py", "short/test_blackwell_only.py", "short/test_both_backends.py", "short/test_portable_small.py"}},
		{"run-on-blackwell empties hopper", "stage-c-4-gpu-h200", []string{"run-on-blackwell"}, nil},
		{"rdma stays home", "stage-c-8-gpu-h200-rdma", []string{"run-on-blackwell", "run-on-hopper"}, []string{"rdma/test_p2p_update.py"}},
		{"both arches run portable tests twice", "stage-c-4-gpu-h200", []string{"run-on-hopper", "run-on-blackwell"}, []string{"megatron/test_portable_four.py", "short/test_both_backends.py", "short/test_hopper_only.py"}},
		// blackwell-only picks the arch without absorbing: Blackwell-homed tests only.
		{"blackwell-only", "stage-c-8-gpu-b200", []string{"run-ci-blackwell-only"}, []string{"short/test_blackwell_only.py"}},
		{"blackwell-only leaves hopper empty", "stage-c-8-gpu-h200", []string{"run-ci-blackwell-only"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := files(tt.suite, tt.raw...); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}
	if got := reg.Tables.TargetStage("stage-b-2-gpu-h200", "blackwell"); got != "stage-c-8-gpu-b200" {
		t.Errorf("target of a 2-GPU Hopper test on Blackwell: %q", got)
	}
	if got := reg.Tables.TargetStage("stage-c-8-gpu-h200-rdma", "blackwell"); got != "" {
		t.Errorf("an rdma-homed test has no Blackwell stage, got %q", got)
	}
}

func TestGPUGenStageSelection(t *testing.T) {
	reg := gpugenRegistry(t)
	nul := func(entries ...string) []byte { return []byte(strings.Join(entries, "\x00") + "\x00") }
	tests := []struct {
		name   string
		raw    []string
		diff   []byte
		skip   []string
		needs  bool
		unused bool
	}{
		// A requested label makes its stages explicit, whatever the diff touches.
		{"a b200-only test changed", []string{"run-ci-short"}, nul("M", "tests/e2e/short/test_blackwell_only.py"),
			[]string{"stage-c-4-gpu-mi350", "stage-c-8-gpu-h200", "stage-c-8-gpu-h200-rdma"}, true, false},
		// blackwell-only is a broad scope: every runnable stage is explicit,
		// and only the Blackwell-homed CUDA tests are runnable (ROCm is not an arch).
		{"a b200-only test changed, broad scope", []string{"run-ci-blackwell-only"}, nul("M", "tests/e2e/short/test_blackwell_only.py"),
			[]string{"stage-b-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-8-gpu-h200", "stage-c-8-gpu-h200-rdma"}, true, false},
		{"run-on-blackwell moves the affected stage", []string{"run-on-blackwell", "run-ci-short"}, nul("M", "tests/e2e/short/test_portable_small.py"),
			[]string{"stage-b-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-4-gpu-mi350", "stage-c-8-gpu-h200", "stage-c-8-gpu-h200-rdma"}, true, false},
		{"docs only, a label asks for megatron", []string{"run-ci-megatron"}, nul("M", "docs/a.md"),
			[]string{"stage-c-8-gpu-b200", "stage-c-8-gpu-h200-rdma", "stage-b-2-gpu-h200", "stage-c-4-gpu-mi350"}, true, false},
		{"docs only, no label", nil, nul("M", "docs/a.md"),
			[]string{"stage-c-4-gpu-h200", "stage-c-8-gpu-b200", "stage-c-8-gpu-h200", "stage-c-8-gpu-h200-rdma", "stage-b-2-gpu-h200", "stage-c-4-gpu-mi350"}, false, false},
		// The later form: an unusable diff skips the unrunnable stages (rules §11.5).
		{"unusable diff", []string{"run-ci-weight-update"}, nil,
			[]string{"stage-b-2-gpu-h200", "stage-c-4-gpu-h200", "stage-c-4-gpu-mi350", "stage-c-8-gpu-b200", "stage-c-8-gpu-h200"}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wp, err := ResolveTrigger(Trigger{Event: EventPullRequest, PRLabelsJSON: jsonList(tt.raw), Tables: reg.Tables})
			if err != nil {
				t.Fatal(err)
			}
			sel, err := SelectPRStages(reg, wp, tt.diff)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sel.Skipped, sortedCopy(tt.skip)) {
				t.Errorf("skipped %v\nwant %v", sel.Skipped, sortedCopy(tt.skip))
			}
			out := reg.Tables.Outputs(wp, sel.Skipped)
			if out.NeedsCUDAImage == nil || *out.NeedsCUDAImage != tt.needs {
				t.Errorf("needs_cuda_image %v, want %t", out.NeedsCUDAImage, tt.needs)
			}
			if tt.unused != (sel.DiffUnusable != "") || (tt.unused && !strings.Contains(sel.DiffNote(), "all selected GPU stages are treated as affected")) {
				t.Errorf("diff note %q", sel.DiffNote())
			}
		})
	}
}

func jsonList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = `"` + s + `"`
	}
	return "[" + strings.Join(q, ",") + "]"
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// lint names the step of a run workflow miles-ci does not model (rules §11.6).
func TestGPUGenLintUnmodeledStep(t *testing.T) {
	reg := gpugenRegistry(t)
	drift := Lint(reg)
	if len(drift) != 1 || drift[0].Kind != DriftUnmodeledStep || drift[0].File != RunCIWorkflow || drift[0].Line != 41 ||
		!strings.Contains(drift[0].Message, `"Attach isolated RDMA networks"`) {
		t.Errorf("drift %+v", drift)
	}
	steps := reg.Tables.RunSteps
	if steps.ROCmPatch || !reflect.DeepEqual(steps.ROCmPackages, []string{"polars", "zstandard", "xxhash", "blake3"}) ||
		!reflect.DeepEqual(steps.Reconcile, []string{"python", "tests/ci/reconcile_dependencies.py", "examples/lora/requirements.txt", "requirements.txt"}) {
		t.Errorf("run steps %+v", steps)
	}
}

// The first form of the GPU-generation tables (CUDA_STAGE_ARCH, Miles PRs
// 2702-2703): hardware= is checked against it, but there is no dispatch yet,
// so run-on-<arch> is an ordinary label without the run-ci- prefix.
func TestGPUGenFirstForm(t *testing.T) {
	root := gpugenTree(t, map[string]string{
		HardwareFile:          "KNOWN_ARCHES = (\"hopper\", \"blackwell\")\n\nCUDA_STAGE_ARCH = {\n    \"stage-c-4-gpu-h200\": \"hopper\",\n    \"stage-c-8-gpu-b200\": \"blackwell\",\n}\n",
		RunSuiteFile:          "CI_SUITES = {HWBackend.CPU: [\"stage-a-cpu\"], HWBackend.CUDA: [\"stage-c-4-gpu-h200\", \"stage-c-8-gpu-b200\"], HWBackend.ROCM: []}\n",
		"tests/e2e/test_a.py": "register_cuda_ci(est_time=1, suite=\"stage-c-4-gpu-h200\", labels=[\"short\"], hardware=[\"hopper\", \"blackwell\"])\n",
		"tests/e2e/test_b.py": "register_cuda_ci(est_time=1, suite=\"stage-c-8-gpu-b200\", labels=[\"short\"], hardware=[\"blackwell\"])\n",
	})
	reg, err := LoadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Tables.Rules != RulesGPUGen || !reg.Tables.Forms.NoDispatch {
		t.Fatalf("rules %q forms %+v", reg.Tables.Rules, reg.Tables.Forms)
	}
	p, err := BuildPlan(reg, PlanRequest{HW: CUDA, Suite: "stage-c-8-gpu-b200", Cadence: Regular, Labels: []string{"run-on-blackwell", "run-ci-short"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Enabled) != 1 || p.Enabled[0].File != "tests/e2e/test_b.py" || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "'run-on-blackwell' is missing the expected 'run-ci-' prefix") {
		t.Errorf("enabled %+v warnings %q", p.Enabled, p.Warnings)
	}
	_, err = LoadRegistry(gpugenTree(t, map[string]string{
		HardwareFile:          "KNOWN_ARCHES = (\"hopper\", \"blackwell\")\nCUDA_STAGE_ARCH = {\"stage-c-8-gpu-b200\": \"blackwell\"}\n",
		RunSuiteFile:          "CI_SUITES = {HWBackend.CUDA: [\"stage-c-8-gpu-b200\"]}\n",
		"tests/e2e/test_a.py": "register_cuda_ci(est_time=1, suite=\"stage-c-8-gpu-b200\", labels=[\"short\"], hardware=[\"hopper\", \"blackwell\"])\n",
	}))
	var re *RegistryError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "a test's home stage must be on its first supported arch") {
		t.Errorf("wanted the home-stage error, got %v", err)
	}
}

// TestCapabilitiesFollowTheCheckoutsForm: a third runner label is a
// capability only where tests/ci/hardware.py's CudaStage has capabilities
// (Miles' RDMA-stage line). In the f030484dd form, which has none, dispatch
// looks at GPU counts only, so run-on-blackwell sends an rdma-homed test to
// the 8-GPU B200 stage as Miles does.
func TestCapabilitiesFollowTheCheckoutsForm(t *testing.T) {
	hw := string(mustRead(t, gpugenRoot+"/"+HardwareFile))
	without := regexp.MustCompile(`(?s)\n    @property\n.*?runs_on\[2:\]\)\n`).ReplaceAllString(hw, "\n")
	if without == hw || strings.Contains(without, "capabilities") {
		t.Fatalf("testdata/miles-gpugen's hardware.py no longer has the capabilities property this test removes:\n%s", hw)
	}
	test := "from tests.ci.ci_register import register_cuda_ci\n\nregister_cuda_ci(est_time=800, suite=\"stage-c-8-gpu-h200-rdma\", labels=[\"weight-update\"], hardware=[\"hopper\", \"blackwell\"])\n"
	for _, tc := range []struct {
		name, hardware string
		want           string
		wantForm       bool
	}{
		{"RDMA-stage line: capabilities", hw, "", true},
		{"f030484dd: no capabilities", without, "stage-c-8-gpu-b200", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := gpugenTree(t, map[string]string{HardwareFile: tc.hardware, "tests/e2e/rdma/test_p2p_update.py": test})
			reg, err := LoadRegistry(root)
			if err != nil {
				t.Fatal(err)
			}
			if got := reg.Tables.Forms.StageCapabilities; got != tc.wantForm {
				t.Errorf("wanted StageCapabilities %v, got %v", tc.wantForm, got)
			}
			if got := reg.Tables.TargetStage("stage-c-8-gpu-h200-rdma", "blackwell"); got != tc.want {
				t.Errorf("wanted the rdma-homed test's Blackwell stage %q, got %q", tc.want, got)
			}
			p, err := BuildPlan(reg, PlanRequest{HW: CUDA, Suite: "stage-c-8-gpu-b200", Cadence: Regular, Labels: []string{"run-on-blackwell", "run-ci-weight-update"}})
			if err != nil {
				t.Fatal(err)
			}
			runs := slices.ContainsFunc(p.Enabled, func(e PlannedTest) bool { return e.File == "tests/e2e/rdma/test_p2p_update.py" })
			if runs != (tc.want != "") {
				t.Errorf("wanted the rdma test on stage-c-8-gpu-b200: %v, got %v", tc.want != "", runs)
			}
		})
	}
}
