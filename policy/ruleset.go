package policy

import (
	"slices"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// What each rule set knows (rules §0). One table: a new rule set of Miles is a
// new row here, its tables are read in tables_load.go and hardware.go, and
// every rule that differs between sets asks Tables.Rules or Tables.Forms.
var ruleSets = map[RuleSet]ruleSetSpec{
	RulesBase: {
		keywords: []string{"disabled", "est_time", "labels", "nightly", "suite"},
	},
	RulesGPUGen: {
		keywords:       []string{"disabled", "est_time", "hardware", "labels", "nightly", "suite"},
		hardware:       true,
		blackwellLabel: "run-ci-blackwell-only",
		blackwellArch:  "blackwell",
	},
	RulesB200Pool: {
		keywords:       []string{"disabled", "est_time", "hardware", "labels", "nightly", "num_gpus", "suite"},
		hardware:       true,
		blackwellLabel: "run-ci-blackwell-only",
		blackwellArch:  "blackwell",
		numGPUs:        true,
		maxNumGPUs:     8,
		// b200_plan.py's plan_jobs asserts these two suites.
		poolSuites: []string{"stage-c-4-gpu-b200", "stage-c-8-gpu-b200"},
	},
}

// poolKeyword is the registration keyword of the B200 pool line.
const poolKeyword = "num_gpus"

// PoolPlannerFile is the B200 pool line's planner.
const PoolPlannerFile = "tests/ci/b200_plan.py"

// choosePoolRules moves a GPU-generation checkout to the B200 pool rules
// when it declares both halves of that line (rules §0, §11.8): num_gpus in
// its own _VALID_KWARGS, and the planner that gives it its meaning,
// tests/ci/b200_plan.py with a top-level plan_jobs. With the keyword alone
// the checkout stays ahead of miles-ci (rules §11.7): what it does with
// num_gpus is not known.
func (t *Tables) choosePoolRules(src func(rel string) []byte) {
	if t.Rules != RulesGPUGen || t.Forms.NoDispatch || !slices.Contains(t.Keywords, poolKeyword) {
		return
	}
	data := src(PoolPlannerFile)
	if data == nil {
		return
	}
	found := false
	err := pysource.ScanTopLevel(pysource.Normalize(string(data)), func(toks []pysource.Token) {
		found = found || (len(toks) > 1 && toks[0].Text == "def" && toks[1].Text == "plan_jobs")
	})
	if err == nil && found {
		t.Rules = RulesB200Pool
	}
}

// ruleSetSpec is the knowledge of one rule set.
type ruleSetSpec struct {
	// keywords are the registration keywords the set implements, sorted.
	keywords []string
	// hardware: register_cuda_ci takes hardware= and CUDA tests are
	// dispatched to stages by GPU generation (rules §11.2, §11.4).
	hardware bool
	// blackwellLabel is the scope label that runs the tests exclusive to
	// blackwellArch (rules §11.3), or "".
	blackwellLabel, blackwellArch string
	// numGPUs: register_cuda_ci takes num_gpus=, at most maxNumGPUs (rules §11.8).
	numGPUs    bool
	maxNumGPUs int
	// poolSuites are the suites the B200 pool planner plans together.
	poolSuites []string
}

// spec returns the knowledge of the tables' rule set.
func (t *Tables) spec() ruleSetSpec { return ruleSets[t.or().Rules] }

// Forms are the later forms of one rule set that a checkout's tests/ci code
// takes (rules §11.5, and the older forms before it). Each is read from what
// the checkout's code declares (formMarkers); a checkout without that file
// keeps the 31f1ca9 form.
type Forms struct {
	// UnusableDiffSkipsUnrunnable: on a pull request whose diff is unusable,
	// ci_policy skips PR_GPU_STAGES − runnable instead of no stage.
	UnusableDiffSkipsUnrunnable bool `json:"unusable_diff_skips_unrunnable,omitempty"`
	// NeedsCUDAImage: ci_policy writes the needs_cuda_image output.
	NeedsCUDAImage bool `json:"needs_cuda_image,omitempty"`
	// HasTestsOutput: run_suite.py --list-only --github-output FILE appends has_tests=.
	HasTestsOutput bool `json:"has_tests_output,omitempty"`
	// NoDispatch: the GPU-generation tables are in their first form
	// (CUDA_STAGE_ARCH, Miles PRs 2702-2703): hardware= is checked, but no
	// run-on-<arch> or blackwell-only label exists yet and every test runs
	// in its home stage.
	NoDispatch bool `json:"no_dispatch,omitempty"`
	// StageCapabilities: tests/ci/hardware.py's code names `capabilities`
	// (CudaStage.capabilities, the runner labels after the GPU model and
	// count, Miles' RDMA-stage line): dispatch keeps a test off a stage
	// without every capability of its home. Without it (f030484dd) a third
	// runner label is no capability and dispatch looks at GPU counts only.
	StageCapabilities bool `json:"stage_capabilities,omitempty"`
}

// formMarker says how a checkout declares a form: whether a string literal
// of one of its tests/ci files holds marker (the message or output line that
// form's code prints). set records what was found; a checkout without the
// file keeps the zero Forms, the form of 31f1ca9.
type formMarker struct {
	file   string
	marker string
	set    func(f *Forms, found bool)
}

var formMarkers = []formMarker{
	{CIPolicyFile, "all selected GPU stages are treated as affected", func(f *Forms, found bool) { f.UnusableDiffSkipsUnrunnable = found }},
	{CIPolicyFile, "needs_cuda_image=", func(f *Forms, found bool) { f.NeedsCUDAImage = found }},
	{RunSuiteFile, "has_tests=", func(f *Forms, found bool) { f.HasTestsOutput = found }},
}

// readForms sets the forms from the checkout's files (src returns a file's
// bytes, nil when it is absent).
func (t *Tables) readForms(src func(rel string) []byte) {
	literals := map[string][]string{}
	for _, m := range formMarkers {
		lits, read := literals[m.file]
		if !read {
			data := src(m.file)
			if data == nil {
				literals[m.file] = nil
				continue
			}
			lits = stringLiterals(data)
			if lits == nil {
				lits = []string{}
			}
			literals[m.file] = lits
		}
		if lits == nil {
			continue
		}
		m.set(&t.Forms, slices.ContainsFunc(lits, func(s string) bool { return strings.Contains(s, m.marker) }))
	}
	if t.Rules != RulesBase {
		if data := src(HardwareFile); data != nil {
			t.Forms.StageCapabilities = codeNames(data, "capabilities")
		}
	}
}

// codeNames reports whether a Python file's code (not its strings or
// comments) uses the name; false when the file does not tokenize.
func codeNames(src []byte, name string) bool {
	found := false
	err := pysource.Scan(string(src), func(toks []pysource.Token) error {
		for _, tok := range toks {
			if tok.Kind == pysource.Name && tok.Text == name {
				found = true
			}
		}
		return nil
	})
	return err == nil && found
}

// stringLiterals returns the text of every string token of a Python file
// (f-strings as written); nil when the file does not tokenize.
func stringLiterals(src []byte) []string {
	var out []string
	err := pysource.Scan(string(src), func(toks []pysource.Token) error {
		for _, tok := range toks {
			if tok.Kind == pysource.String {
				out = append(out, tok.Text)
			}
		}
		return nil
	})
	if err != nil {
		return nil
	}
	return out
}

// KnownKeywords returns the registration keywords this checkout accepts: its
// own _VALID_KWARGS where it has one, else those of its rule set.
func (t *Tables) KnownKeywords() []string {
	t = t.or()
	if t.Keywords != nil {
		return slices.Clone(t.Keywords)
	}
	return slices.Clone(t.spec().keywords)
}

// keywordOrder is the order keywords are listed in a fix: Miles' order of
// the parameters, then any other in byte order.
var keywordOrder = []string{"est_time", "suite", "labels", "hardware", "num_gpus", "nightly", "disabled"}

// keywordList is "est_time, suite, labels, nightly and disabled".
func keywordList(kws []string) string {
	ordered := slices.Clone(kws)
	rank := func(k string) int {
		if i := slices.Index(keywordOrder, k); i >= 0 {
			return i
		}
		return len(keywordOrder)
	}
	slices.SortStableFunc(ordered, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	if len(ordered) <= 1 {
		return strings.Join(ordered, "")
	}
	return strings.Join(ordered[:len(ordered)-1], ", ") + " and " + ordered[len(ordered)-1]
}

// keywordStatus says how a registration keyword is treated: accepted by the
// checkout and implemented here (ok), not accepted by the checkout (the
// test's error), or accepted by the checkout but unknown to every rule set
// of miles-ci (ahead, rules §11.7).
func (t *Tables) keywordStatus(k string) (accepted, implemented bool) {
	return slices.Contains(t.KnownKeywords(), k), slices.Contains(t.spec().keywords, k)
}

// IsWorkflowOnlyLabel reports a raw label the workflow consumes and the
// domain request ignores silently: nightly, bypass-fastfail and, under the
// GPU-generation rules, run-on-<arch> for every known arch.
func (t *Tables) IsWorkflowOnlyLabel(l string) bool {
	if l == LabelNightly || l == LabelBypassFastfail {
		return true
	}
	arch, ok := strings.CutPrefix(l, runOnPrefix)
	return ok && !t.or().Forms.NoDispatch && slices.Contains(t.or().Arches, arch)
}

// TriggerLabels are the run-ci-* and run-on-* labels the checkout acts on:
// run-ci-<X> for each label of labels.py, the scope labels run-ci-all and
// run-ci-image, and under the GPU-generation rules the arch-only label and
// run-on-<arch> for each known arch.
func (t *Tables) TriggerLabels() []string {
	var out []string
	for _, l := range t.KnownLabels() {
		out = append(out, runCIPrefix+l)
	}
	out = append(out, LabelRunAll, LabelRunImage)
	if t.or().Forms.NoDispatch {
		return out
	}
	if spec := t.spec(); spec.hardware && spec.blackwellLabel != "" {
		out = append(out, spec.blackwellLabel)
	}
	for _, a := range t.or().Arches {
		out = append(out, runOnPrefix+a)
	}
	return out
}

// IsTriggerShaped says whether a label looks like one that triggers CI
// (run-ci-* or run-on-*), so an unknown one is likely a typo.
func IsTriggerShaped(l string) bool {
	return strings.HasPrefix(l, runCIPrefix) || strings.HasPrefix(l, runOnPrefix)
}

// runOnPrefix starts the labels that dispatch a run to a GPU generation.
const runOnPrefix = "run-on-"
