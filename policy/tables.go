package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/internal/fsinput"
)

// Tables are the parts of Miles CI that change from one Miles commit to the
// next (rules §0): the known labels, the suites per backend, the stage roster,
// the PR GPU stages and broad scopes, the paths that affect no GPU stage and
// the schedule crons. The rules that use them do not change. BuiltinTables
// holds the values of rules §1-§4; LoadTables reads a checkout's own.
type Tables struct {
	// Labels are the known domain labels, in KNOWN_LABELS order.
	Labels []Label `json:"labels"`
	// Suites are the suites of each backend, in CI_SUITES order.
	Suites BackendSuites `json:"suites"`
	// Roster are the stages: the stage jobs of the PR workflows, then the
	// suites only an external nightly runs.
	Roster []Stage `json:"roster"`
	// PRGPU are the GPU stages a pull request may skip (PR_GPU_STAGES), sorted.
	PRGPU []string `json:"pr_gpu_stages"`
	// BroadScopes are the raw labels that make every runnable PR GPU stage
	// explicit (_BROAD_PR_SCOPES), sorted.
	BroadScopes []string `json:"broad_pr_scopes"`
	// NoGPUPaths, NoGPUPrefixes and NoGPUSuffixes are the changed paths that
	// affect no GPU stage: exact paths, prefixes and suffixes, sorted.
	NoGPUPaths    []string `json:"no_gpu_paths"`
	NoGPUPrefixes []string `json:"no_gpu_prefixes"`
	NoGPUSuffixes []string `json:"no_gpu_suffixes"`
	// Crons map each configured schedule cron to its policy, in source order.
	Crons []Cron `json:"crons"`
	// Origins say where each table came from, in TableNames order.
	Origins []Origin `json:"origins"`
	// Rules is the rule set the checkout declares (rules §0): RulesBase for
	// 31f1ca9 and every checkout in that form, RulesGPUGen where it holds
	// tests/ci/hardware.py (rules §11).
	Rules RuleSet `json:"rules"`
	// Arches are KNOWN_ARCHES (rules §11.1), in auto-preference order; empty
	// under RulesBase.
	Arches []string `json:"arches,omitempty"`
	// CUDAStages are CUDA_STAGES (rules §11.1), in order; empty under RulesBase.
	CUDAStages []CUDAStage `json:"cuda_stages,omitempty"`
	// Keywords are the checkout's _VALID_KWARGS (sorted), or nil where
	// tests/ci/ci_register.py holds none: then the rule set's own apply.
	Keywords []string `json:"valid_kwargs,omitempty"`
	// Forms are the later forms the checkout's tests/ci code takes.
	Forms Forms `json:"forms"`
	// RunSteps are what the run workflows do to a stage's container.
	RunSteps RunSteps `json:"run_steps"`

	// lines are the source line of each element, per table (read tables only).
	lines map[string]map[string]int
	// workflow is what the workflow reader saw besides the roster, for lint.
	workflow workflowFacts
	// files are the checkout's workflow files as LoadTables read them (nil
	// for the built-in tables): the one read of each that a run makes.
	files *workflowFiles
	// olderPolicy and olderDiscovery decline an older resolve-ci-policy
	// step and an older test discovery (OlderPolicyStep, LoadRegistry),
	// found in the ci_policy.py and run_suite.py LoadTables read, so that no
	// later step reads either file again (nil: neither, or built-in tables).
	olderPolicy, olderDiscovery *AheadError
}

// RuleSet names one set of Miles CI rules (rules §0).
type RuleSet string

// The rule sets miles-ci implements.
const (
	// RulesBase are the rules of Miles 31f1ca9 and earlier (rules §1-§10).
	RulesBase RuleSet = "31f1ca9"
	// RulesGPUGen are the GPU-generation rules Miles adopted after 31f1ca9 (rules §11).
	RulesGPUGen RuleSet = "gpu-generation"
	// RulesB200Pool are the GPU-generation rules with Miles' B200 pool
	// (rules §11.8): num_gpus= on register_cuda_ci and the pool planner.
	RulesB200Pool RuleSet = "b200-pool"
)

// Label is one known domain label and its description.
type Label struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// BackendSuites are the suites of each backend, in CI_SUITES order.
type BackendSuites struct {
	CPU  []string `json:"cpu"`
	CUDA []string `json:"cuda"`
	ROCM []string `json:"rocm"`
}

// Of returns the suites of one backend (the slice itself, not a copy).
func (s BackendSuites) Of(b Backend) []string {
	switch b {
	case CPU:
		return s.CPU
	case CUDA:
		return s.CUDA
	case ROCM:
		return s.ROCM
	}
	return nil
}

// Cron is a scheduled trigger's policy: its cadence and raw labels.
type Cron struct {
	Cron      string   `json:"cron"`
	Cadence   Cadence  `json:"cadence"`
	RawLabels []string `json:"raw_labels"`
}

// Origin says where one table came from.
type Origin struct {
	// Table is one of TableNames.
	Table string `json:"table"`
	// File is the repo-relative file it was read from; "" for the built-in value.
	File string `json:"file,omitempty"`
	// Line is the 1-based line of its assignment (0 for the built-in value or a workflow).
	Line int `json:"line,omitempty"`
}

// Builtin reports a table that no file of the checkout provided.
func (o Origin) Builtin() bool { return o.File == "" }

// String is "FILE:LINE", "FILE" or "built-in".
func (o Origin) String() string {
	switch {
	case o.File == "":
		return "built-in"
	case o.Line > 0:
		return fmt.Sprintf("%s:%d", o.File, o.Line)
	}
	return o.File
}

// The tables, named after where Miles keeps them.
const (
	TableLabels        = "KNOWN_LABELS"
	TableSuites        = "CI_SUITES"
	TablePRGPUStages   = "PR_GPU_STAGES"
	TableBroadScopes   = "_BROAD_PR_SCOPES"
	TableNoGPUPaths    = "_NO_GPU_PATHS"
	TableNoGPUPrefixes = "_NO_GPU_PREFIXES"
	TableNoGPUSuffixes = "_NO_GPU_SUFFIXES"
	TableCrons         = "SCHEDULE_POLICIES"
	TableRoster        = "roster"
)

// TableNames lists every table, in the order Origins keeps them.
var TableNames = []string{TableLabels, TableSuites, TablePRGPUStages, TableBroadScopes,
	TableNoGPUPaths, TableNoGPUPrefixes, TableNoGPUSuffixes, TableCrons, TableRoster}

// builtin are the tables of Miles commit 31f1ca9 (rules §1-§4).
var builtin = newBuiltinTables()

func newBuiltinTables() *Tables {
	t := &Tables{
		Rules:    RulesBase,
		RunSteps: defaultRunSteps(),
		Suites: BackendSuites{
			CPU:  []string{"stage-a-cpu", "stage-b-cpu"},
			CUDA: []string{"stage-b-2-gpu-h200", "stage-c-8-gpu-h100", "stage-c-8-gpu-h200", "stage-c-4-gpu-h200", "stage-c-2-gpu-h200"},
			ROCM: []string{"stage-c-4-gpu-mi350", "nightly-stage-c-8-gpu-mi350", "nightly-stage-c-4-gpu-mi350", "nightly-stage-c-2-gpu-mi350"},
		},
		Roster:        builtinRoster(),
		BroadScopes:   []string{LabelNightly, LabelRunAll, LabelRunImage},
		NoGPUPaths:    []string{".pre-commit-config.yaml", "scripts/tools/sync_example_docs.py"},
		NoGPUPrefixes: []string{"docs/"},
		NoGPUSuffixes: []string{".md", ".mdx"},
		Crons: []Cron{
			{Cron: "0 15 * * 0-5", Cadence: Nightly, RawLabels: []string{}},
			{Cron: "0 15 * * 6", Cadence: Weekly, RawLabels: []string{}},
		},
	}
	for _, l := range KnownLabels {
		t.Labels = append(t.Labels, Label{Name: l})
	}
	for i, s := range t.Roster {
		t.Roster[i].Source = "built-in"
		if ProfileOf(s.Backend).GPU != NoGPU && !s.External {
			t.PRGPU = append(t.PRGPU, s.Name)
		}
	}
	slices.Sort(t.PRGPU)
	for _, name := range TableNames {
		t.Origins = append(t.Origins, Origin{Table: name})
	}
	return t
}

// BuiltinTables returns a copy of the tables of rules §1-§4 (Miles commit
// 31f1ca9), which apply where a checkout holds none of its own.
func BuiltinTables() *Tables { return builtin.Clone() }

// Clone returns a deep copy.
func (t *Tables) Clone() *Tables {
	c := *t
	c.Labels = slices.Clone(t.Labels)
	c.Suites = BackendSuites{CPU: slices.Clone(t.Suites.CPU), CUDA: slices.Clone(t.Suites.CUDA), ROCM: slices.Clone(t.Suites.ROCM)}
	c.Roster = make([]Stage, len(t.Roster))
	for i, s := range t.Roster {
		c.Roster[i] = s.clone()
	}
	c.PRGPU = slices.Clone(t.PRGPU)
	c.BroadScopes = slices.Clone(t.BroadScopes)
	c.NoGPUPaths = slices.Clone(t.NoGPUPaths)
	c.NoGPUPrefixes = slices.Clone(t.NoGPUPrefixes)
	c.NoGPUSuffixes = slices.Clone(t.NoGPUSuffixes)
	c.Crons = make([]Cron, len(t.Crons))
	for i, cr := range t.Crons {
		cr.RawLabels = slices.Clone(cr.RawLabels)
		c.Crons[i] = cr
	}
	c.Origins = slices.Clone(t.Origins)
	c.Arches = slices.Clone(t.Arches)
	c.Keywords = slices.Clone(t.Keywords)
	c.RunSteps.Reconcile = slices.Clone(t.RunSteps.Reconcile)
	c.RunSteps.ROCmPackages = slices.Clone(t.RunSteps.ROCmPackages)
	c.RunSteps.Env = slices.Clone(t.RunSteps.Env)
	c.RunSteps.Unmodeled = slices.Clone(t.RunSteps.Unmodeled)
	c.RunSteps.JobTimeout = maps.Clone(t.RunSteps.JobTimeout)
	c.CUDAStages = make([]CUDAStage, len(t.CUDAStages))
	for i, st := range t.CUDAStages {
		st.RunsOn = slices.Clone(st.RunsOn)
		c.CUDAStages[i] = st
	}
	return &c
}

// or returns t, or the built-in tables when t is nil.
func (t *Tables) or() *Tables {
	if t == nil {
		return builtin
	}
	return t
}

// KnownLabels returns the known label names, in KNOWN_LABELS order.
func (t *Tables) KnownLabels() []string {
	t = t.or()
	out := make([]string, len(t.Labels))
	for i, l := range t.Labels {
		out[i] = l.Name
	}
	return out
}

// IsKnownLabel reports whether l is a known domain label.
func (t *Tables) IsKnownLabel(l string) bool {
	for _, k := range t.or().Labels {
		if k.Name == l {
			return true
		}
	}
	return false
}

// sortedKnownLabels returns the label names sorted by byte value.
func (t *Tables) sortedKnownLabels() []string {
	s := t.KnownLabels()
	slices.Sort(s)
	return s
}

// SuitesOf returns a copy of the suites of a backend.
func (t *Tables) SuitesOf(b Backend) []string { return slices.Clone(t.or().Suites.Of(b)) }

// CheckSuite returns an error unless suite belongs to backend b.
func (t *Tables) CheckSuite(b Backend, suite string) error {
	suites := t.or().Suites.Of(b)
	if slices.Contains(suites, suite) {
		return nil
	}
	if len(suites) == 0 {
		//lint:ignore ST1005 the reference's error text, verbatim (parity with the Python CI)
		return fmt.Errorf("Unknown suite %s for backend %s; CI_SUITES lists no %s suite", suite, backendEnumName(b), b)
	}
	//lint:ignore ST1005 the reference's error text, verbatim (parity with the Python CI)
	return fmt.Errorf("Unknown suite %s for backend %s; the %s suites are %s", suite, backendEnumName(b), b, strings.Join(suites, ", "))
}

// Stage returns the first roster entry that runs a suite.
func (t *Tables) Stage(suite string) (Stage, bool) {
	for _, s := range t.or().Roster {
		if s.Name == suite {
			return s.clone(), true
		}
	}
	return Stage{}, false
}

// Stages returns a copy of the roster.
func (t *Tables) Stages() []Stage { return t.or().Clone().Roster }

// PRGPUStages returns the GPU stages a pull request may skip, sorted.
func (t *Tables) PRGPUStages() []string { return slices.Clone(t.or().PRGPU) }

// IsNoGPUPath reports a changed path that cannot affect a GPU stage.
func (t *Tables) IsNoGPUPath(p string) bool {
	t = t.or()
	if slices.Contains(t.NoGPUPaths, p) {
		return true
	}
	for _, pre := range t.NoGPUPrefixes {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	for _, suf := range t.NoGPUSuffixes {
		if strings.HasSuffix(p, suf) {
			return true
		}
	}
	return false
}

// CronPolicy returns the policy of a schedule cron, matched exactly.
func (t *Tables) CronPolicy(cron string) (Cron, bool) {
	for _, c := range t.or().Crons {
		if c.Cron == cron {
			c.RawLabels = slices.Clone(c.RawLabels)
			return c, true
		}
	}
	return Cron{}, false
}

// Origin returns where one table came from.
func (t *Tables) Origin(table string) Origin {
	for _, o := range t.or().Origins {
		if o.Table == table {
			return o
		}
	}
	return Origin{Table: table}
}

// FallbackNote is one line saying which tables are the built-in ones because
// the checkout at root holds none, or "" when every table came from it.
func (t *Tables) FallbackNote(root string) string {
	var names []string
	for _, o := range t.or().Origins {
		if o.Builtin() {
			names = append(names, o.Table)
		}
	}
	if len(names) == 0 {
		return ""
	}
	root = fsinput.FolderName(root)
	what := strings.Join(names, ", ")
	if len(names) == len(TableNames) {
		what = "no Miles CI tables (tests/ci/labels.py, run_suite.py, stage_selection.py, ci_policy.py, .github/workflows/pr-test*.yml)"
		return fmt.Sprintf("%s holds %s; using the built-in tables of Miles 31f1ca9", root, what)
	}
	return fmt.Sprintf("%s does not define %s; using the built-in values of Miles 31f1ca9 for those", root, what)
}
