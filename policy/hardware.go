package policy

import (
	"fmt"
	"slices"

	"github.com/radixark/miles-ci/policy/pysource"
)

// Where the GPU-generation rules keep their tables (rules §11.1).
const (
	HardwareFile   = "tests/ci/hardware.py"
	CIRegisterFile = "tests/ci/ci_register.py"
)

// The GPU-generation tables, named as Miles names them.
const (
	TableArches     = "KNOWN_ARCHES"
	TableCUDAStages = "CUDA_STAGES"
	TableKeywords   = "_VALID_KWARGS"
	// TableStageArch is the first form of the GPU-generation tables (Miles
	// PR 2702): stage name -> arch, before CUDA_STAGES and dispatch.
	TableStageArch = "CUDA_STAGE_ARCH"
)

// CUDAStage is one CUDA_STAGES entry: the stage's GPU generation, GPU count
// and runner labels.
type CUDAStage struct {
	Name    string   `json:"name"`
	Arch    string   `json:"arch"`
	NumGPUs int      `json:"num_gpus"`
	RunsOn  []string `json:"runs_on"`
}

// Capabilities are what a test homed on the stage may rely on besides its
// GPUs: the runner labels after the GPU model and count (e.g. rdma).
func (s CUDAStage) Capabilities() []string {
	if len(s.RunsOn) <= 2 {
		return nil
	}
	return s.RunsOn[2:]
}

// capabilities are a stage's capabilities where the checkout's form has
// them (Forms.StageCapabilities), else none.
func (t *Tables) capabilities(s CUDAStage) []string {
	if !t.or().Forms.StageCapabilities {
		return nil
	}
	return s.Capabilities()
}

// cudaStage returns the CUDA_STAGES entry of a suite.
func (t *Tables) cudaStage(name string) (CUDAStage, bool) {
	for _, s := range t.or().CUDAStages {
		if s.Name == name {
			return s, true
		}
	}
	return CUDAStage{}, false
}

// AutoArch is the arch a test with this hardware list runs on when nothing
// asks for another: the first of KNOWN_ARCHES it supports ("" for none).
func (t *Tables) AutoArch(hardware []string) string {
	for _, a := range t.or().Arches {
		if slices.Contains(hardware, a) {
			return a
		}
	}
	return ""
}

// TargetStage is the stage on arch that runs a test homed at home (rules
// §11.4): home itself on its own arch; else the least, by (GPU count,
// number of capabilities, name), of the stages on arch with at least home's
// GPUs and every capability of home; "" when there is none. Capabilities
// count only where the checkout's hardware.py has them
// (Forms.StageCapabilities).
func (t *Tables) TargetStage(home, arch string) string {
	h, ok := t.cudaStage(home)
	if !ok {
		return ""
	}
	if h.Arch == arch {
		return home
	}
	best := CUDAStage{}
	for _, s := range t.or().CUDAStages {
		if s.Arch != arch || s.NumGPUs < h.NumGPUs || !containsAll(t.capabilities(s), t.capabilities(h)) {
			continue
		}
		if best.Name == "" || t.stageLess(s, best) {
			best = s
		}
	}
	return best.Name
}

func (t *Tables) stageLess(a, b CUDAStage) bool {
	if a.NumGPUs != b.NumGPUs {
		return a.NumGPUs < b.NumGPUs
	}
	if ca, cb := len(t.capabilities(a)), len(t.capabilities(b)); ca != cb {
		return ca < cb
	}
	return a.Name < b.Name
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// DispatchTargets are the CUDA stages that run a registration homed at home
// with this hardware list under one dispatch policy (rules §11.4), sorted.
func (t *Tables) DispatchTargets(home string, hardware []string, p RunPolicy) []string {
	var arches []string
	if len(p.DispatchArches) > 0 {
		for _, a := range hardware {
			if slices.Contains(p.DispatchArches, a) && !slices.Contains(arches, a) {
				arches = append(arches, a)
			}
		}
	} else if a := t.AutoArch(hardware); a != "" {
		arches = []string{a}
	}
	h, _ := t.cudaStage(home)
	var out []string
	for _, a := range arches {
		target := ""
		switch {
		case h.Arch == a:
			target = home
		case p.Absorb:
			target = t.TargetStage(home, a)
		}
		if target != "" && !slices.Contains(out, target) {
			out = append(out, target)
		}
	}
	slices.Sort(out)
	return out
}

// RunsInStage reports whether a registration executes in a stage, label
// selection aside: its suite is the stage, except that under the
// GPU-generation rules a CUDA registration runs in its dispatch targets
// (rules §11.4). Listing, shards and PR stage selection all ask this.
func (t *Tables) RunsInStage(r Registration, stage string, p RunPolicy) bool {
	if r.Backend != CUDA || !t.spec().hardware || len(p.DispatchArches) == 0 {
		// With no dispatch arch a test runs on its auto arch, which the
		// registration check made its home stage's arch: its home stage.
		return r.Suite == stage
	}
	return slices.Contains(t.DispatchTargets(r.Suite, r.Hardware, p), stage)
}

// readHardware reads KNOWN_ARCHES and CUDA_STAGES from tests/ci/hardware.py;
// a checkout that defines them takes the GPU-generation rules (rules §0).
func (t *Tables) readHardware(m *pyModule) error {
	av, aline, hasArches, err := m.table(TableArches)
	if err != nil {
		return asAhead(err)
	}
	stagesTable := TableCUDAStages
	sv, sline, hasStages, err := m.table(TableCUDAStages)
	if err == nil && !hasStages {
		// The first form: CUDA_STAGE_ARCH, and no dispatch yet (rules §11.5).
		stagesTable = TableStageArch
		sv, sline, hasStages, err = m.table(TableStageArch)
	}
	if err != nil {
		return asAhead(err)
	}
	switch {
	case !hasArches && !hasStages:
		return nil
	case !hasArches:
		return &AheadError{File: m.file, Line: sline, Construct: stagesTable + " without " + TableArches}
	case !hasStages:
		return &AheadError{File: m.file, Line: aline, Construct: TableArches + " without " + TableCUDAStages}
	}
	arches, lines, err := m.strs(av, TableArches, false)
	if err != nil {
		return asAhead(err)
	}
	var stages []CUDAStage
	if stagesTable == TableStageArch {
		stages, err = m.stageArches(sv, sline)
		t.Forms.NoDispatch = true
	} else {
		stages, err = m.cudaStages(sv, sline)
	}
	if err != nil {
		return asAhead(err)
	}
	for _, s := range stages {
		if !slices.Contains(arches, s.Arch) {
			return &AheadError{File: m.file, Line: sline, Construct: fmt.Sprintf("a CUDA stage %s on arch %s, which %s does not list", pysource.Repr(s.Name), pysource.Repr(s.Arch), TableArches)}
		}
	}
	t.Rules, t.Arches, t.CUDAStages = RulesGPUGen, arches, stages
	t.Origins = append(t.Origins, Origin{Table: TableArches, File: m.file, Line: aline}, Origin{Table: TableCUDAStages, File: m.file, Line: sline})
	t.setLines(TableArches, arches, lines)
	names := make([]string, len(stages))
	for i, st := range stages {
		names[i] = st.Name
	}
	t.setLines(TableCUDAStages, names, m.stageLines)
	return nil
}

// stageArches reads CUDA_STAGE_ARCH: a dict of stage name to arch, in order.
func (m *pyModule) stageArches(v pysource.Value, line int) ([]CUDAStage, error) {
	v = m.resolve(v)
	if v.Kind != pysource.DictValue {
		return nil, m.errf(line, TableStageArch, "must be a dict of stage name to arch, not %s", m.describe(v))
	}
	var out []CUDAStage
	m.stageLines = nil
	for i, k := range v.Keys {
		name, err := m.str(k, TableStageArch, "each stage name")
		if err != nil {
			return nil, err
		}
		arch, err := m.str(v.Elems[i], TableStageArch, "the arch of "+pysource.Repr(name))
		if err != nil {
			return nil, err
		}
		if j := slices.IndexFunc(out, func(x CUDAStage) bool { return x.Name == name }); j >= 0 {
			out[j].Arch = arch
			continue
		}
		out = append(out, CUDAStage{Name: name, Arch: arch})
		m.stageLines = append(m.stageLines, k.Line)
	}
	return out, nil
}

// cudaStages reads CUDA_STAGES: a dict of stage name to
// CudaStage(arch, num_gpus, runs_on), in order.
func (m *pyModule) cudaStages(v pysource.Value, line int) ([]CUDAStage, error) {
	v = m.resolve(v)
	if v.Kind != pysource.DictValue {
		return nil, m.errf(line, TableCUDAStages, "must be a dict of stage name to CudaStage(arch, num_gpus, runs_on), not %s", m.describe(v))
	}
	var out []CUDAStage
	m.stageLines = nil
	for i, k := range v.Keys {
		name, err := m.str(k, TableCUDAStages, "each stage name")
		if err != nil {
			return nil, err
		}
		e := m.resolve(v.Elems[i])
		if e.Kind != pysource.CallValue || len(e.Elems) != 3 {
			return nil, m.errf(e.Line, TableCUDAStages, "maps %s to %s; write CudaStage(ARCH, NUM_GPUS, (RUNNER_LABEL, ...))", pysource.Repr(name), describeValue(e))
		}
		arch, err := m.str(e.Elems[0], TableCUDAStages, "the arch of "+pysource.Repr(name))
		if err != nil {
			return nil, err
		}
		n := m.resolve(e.Elems[1])
		if n.Kind != pysource.NumValue || n.Num != float64(int(n.Num)) || n.Num < 1 {
			return nil, m.errf(n.Line, TableCUDAStages, "gives %s a GPU count that is not a positive whole number", pysource.Repr(name))
		}
		runsOn, _, err := m.strs(e.Elems[2], TableCUDAStages, false)
		if err != nil {
			return nil, err
		}
		s := CUDAStage{Name: name, Arch: arch, NumGPUs: int(n.Num), RunsOn: runsOn}
		if j := slices.IndexFunc(out, func(x CUDAStage) bool { return x.Name == name }); j >= 0 {
			out[j] = s // a repeated key keeps its place and takes the last value
			continue
		}
		out = append(out, s)
		m.stageLines = append(m.stageLines, k.Line)
	}
	return out, nil
}

// readKeywords reads _VALID_KWARGS from tests/ci/ci_register.py: the
// registration keywords the checkout's own code accepts.
func (t *Tables) readKeywords(m *pyModule) error {
	v, line, ok, err := m.table(TableKeywords)
	if err != nil || !ok {
		return asAhead(err)
	}
	kws, lines, err := m.strs(v, TableKeywords, false)
	if err != nil {
		return asAhead(err)
	}
	kws = slices.Clone(kws)
	slices.Sort(kws)
	t.Keywords = slices.Compact(kws)
	t.Origins = append(t.Origins, Origin{Table: TableKeywords, File: m.file, Line: line})
	t.setLines(TableKeywords, kws, lines)
	return nil
}

// setLines records the source line of each element of a table.
func (t *Tables) setLines(table string, elems []string, lines []int) {
	at := map[string]int{}
	for i, e := range elems {
		if _, seen := at[e]; !seen && i < len(lines) {
			at[e] = lines[i]
		}
	}
	if t.lines == nil {
		t.lines = map[string]map[string]int{}
	}
	t.lines[table] = at
}

// asAhead turns a table in a form miles-ci cannot read into the checkout
// being ahead of it (rules §11.7); other errors (nil too) stay as they are.
func asAhead(err error) error {
	te, ok := err.(*TableError)
	if !ok || !te.form {
		return err
	}
	return &AheadError{File: te.File, Line: te.Line, Construct: te.Name, Err: te}
}

// keywordLine is where the checkout's _VALID_KWARGS lists a keyword, for
// the ahead message ("tests/ci/ci_register.py:27"), or the file alone.
func (t *Tables) keywordLine(k string) string {
	o := t.Origin(TableKeywords)
	if o.Builtin() {
		return CIRegisterFile
	}
	if l := t.lines[TableKeywords][k]; l > 0 {
		return fmt.Sprintf("%s:%d", o.File, l)
	}
	return o.String()
}
