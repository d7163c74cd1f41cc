package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/lazyre"
	"github.com/radixark/miles-ci/policy/pysource"
)

// Where Miles keeps its CI tables, relative to the checkout.
const (
	LabelsFile         = "tests/ci/labels.py"
	RunSuiteFile       = "tests/ci/run_suite.py"
	StageSelectionFile = "tests/ci/stage_selection.py"
	CIPolicyFile       = "tests/ci/ci_policy.py"
	PRTestWorkflow     = ".github/workflows/pr-test.yml"
	PRTestROCmWorkflow = ".github/workflows/pr-test-rocm.yml"
)

// maxTableFile bounds every table file read (fsinput.TableFile): Miles' are a few kB, and a
// larger one is not a table file.
const maxTableFile = 4 << 20

// TableError is a table file that holds a table miles-ci cannot read.
type TableError struct {
	// File is the repo-relative file.
	File string
	// Line is the 1-based line of the offending value, or 0.
	Line int
	// Name is the table (or the workflow job) the fault is in, or "".
	Name string
	// Msg says what is wrong and how to mend it.
	Msg string
	// form marks a table present in a form miles-ci cannot read (not a file
	// Python could not read either): the checkout is ahead of miles-ci.
	form bool
}

func (e *TableError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Name != "" {
		return fmt.Sprintf("%s: %s %s", where, e.Name, e.Msg)
	}
	return where + ": " + e.Msg
}

// LoadTables reads the CI tables of the checkout at root: KNOWN_LABELS from
// tests/ci/labels.py, CI_SUITES from run_suite.py, PR_GPU_STAGES and the
// no-GPU paths from stage_selection.py, SCHEDULE_POLICIES from ci_policy.py
// and the stage roster from the stage jobs of .github/workflows/pr-test.yml
// and pr-test-rocm.yml. The Python files are read, never run. A table whose
// file (or assignment) is absent keeps its built-in value, which Origins and
// FallbackNote tell; a table that is present but not a literal of the form
// Miles writes is a *TableError naming the file, line and table.
func LoadTables(root string) (*Tables, error) {
	// A mistyped root would give every built-in table: refuse it instead.
	root, err := CheckCheckout(root)
	if err != nil {
		return nil, err
	}
	t := builtin.Clone()
	steps := []struct {
		file string
		read func(*pyModule) error
	}{
		// hardware.py first: run_suite.py derives CI_SUITES from it, and a
		// fault there is the one to report.
		{HardwareFile, t.readHardware},
		{LabelsFile, t.readLabels},
		{RunSuiteFile, t.readSuites},
		{StageSelectionFile, t.readStageSelection},
		{CIPolicyFile, t.readCrons},
		{CIRegisterFile, t.readKeywords},
	}
	mods := newPyModules(root)
	for _, s := range steps {
		m, err := mods.module(s.file)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		if err := s.read(m); err != nil {
			return nil, asAhead(err)
		}
	}
	src := func(rel string) []byte {
		if m, tried := mods.read[rel]; tried {
			if m == nil {
				return nil // absent: not looked for again
			}
			return m.src // read for its tables already
		}
		data, _ := readTableFile(root, rel)
		return data
	}
	t.choosePoolRules(src)
	t.readForms(src)
	t.olderPolicy = olderPolicyStep(src(PolicyStepFile))
	t.olderDiscovery = olderDiscovery(src(RunSuiteFile))

	docs := workflowDocs{}
	t.files = &workflowFiles{root: root, docs: docs}
	if err := t.readWorkflows(root, docs); err != nil {
		return nil, err
	}
	if err := t.readRunSteps(root, docs); err != nil {
		return nil, err
	}
	t.gatedPRStagesOnly()
	return t, nil
}

// gatedPRStagesOnly narrows the built-in PR GPU stages, when the checkout's
// workflows were read but its stage_selection.py does not define them, to the
// stages those workflows gate on skipped_stages. A Miles from before PR stage
// selection has neither the table nor the gates, and skips no stage; the
// built-in table would make lint ask it for gates and policy report skips
// that its workflows never make.
func (t *Tables) gatedPRStagesOnly() {
	if !t.Origin(TablePRGPUStages).Builtin() || len(t.workflow.files) == 0 {
		return
	}
	t.PRGPU = slices.DeleteFunc(t.PRGPU, func(name string) bool {
		return !slices.ContainsFunc(t.Roster, func(s Stage) bool { return s.Name == name && s.SkipGated })
	})
}

// readTableFile reads a repo-relative file as fsinput.TableFile allows; it
// returns nil, nil when the file does not exist.
func readTableFile(root, rel string) ([]byte, error) {
	data, err := fsinput.ReadFile(filepath.Join(root, filepath.FromSlash(rel)), fsinput.TableFile)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	var fe *fsinput.Error
	if errors.As(err, &fe) {
		return nil, &TableError{File: rel, Msg: fe.Problem + "; a CI table file is a few kB, check that it is the right file"}
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	return data, nil
}

// pyModule is the top-level bindings of one Python table file.
type pyModule struct {
	file string
	// src is the file's text.
	src []byte
	// last is the last assignment to each name, as Python leaves it bound.
	last map[string]pysource.Assignment
	// imports are the names the module binds by `from M import NAME`, last binding kept.
	imports map[string]pysource.FromImport
	// mods reads the sibling modules an import names; nil reads none.
	mods *pyModules
	// stageLines are the lines of the CUDA_STAGES keys last read, in order.
	stageLines []int
}

// pyModules reads the table files of one checkout, each at most once, so
// that a table may name a literal another tests/ci module defines (Miles'
// newer run_suite.py derives its CUDA suites from tests/ci/hardware.py).
type pyModules struct {
	root string
	// read holds each file read (nil while it is being read, or when it is
	// absent or unreadable).
	read map[string]*pyModule
	// budget is how many more value nodes may be copied out of an imported
	// module; nested names could otherwise multiply them.
	budget int
}

// maxImportedNodes bounds the value nodes one checkout's tables may copy
// out of the modules they import from.
const maxImportedNodes = 1 << 20

func newPyModules(root string) *pyModules {
	return &pyModules{root: root, read: map[string]*pyModule{}, budget: maxImportedNodes}
}

// module reads one repo-relative file; nil, nil when it does not exist.
func (ms *pyModules) module(rel string) (*pyModule, error) {
	if m, done := ms.read[rel]; done {
		return m, nil
	}
	ms.read[rel] = nil // a module importing itself, directly or not, finds nothing
	m, err := readPyModule(ms.root, rel)
	if err != nil || m == nil {
		return nil, err
	}
	m.mods = ms
	ms.read[rel] = m
	return m, nil
}

// moduleName is a tests/ci module an import may name: one plain component.
var moduleName = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// sibling is the tests/ci module an import names (`from tests.ci.hardware
// import X`), or nil for any other module or one that cannot be read.
func (m *pyModule) sibling(module string) *pyModule {
	name, ok := strings.CutPrefix(module, "tests.ci.")
	if !ok || m.mods == nil || !moduleName.MatchString(name) {
		return nil
	}
	s, err := m.mods.module("tests/ci/" + name + ".py")
	if err != nil {
		return nil // its own error shows where that module is read as a table
	}
	return s
}

func readPyModule(root, rel string) (*pyModule, error) {
	data, err := readTableFile(root, rel)
	if err != nil || data == nil {
		return nil, err
	}
	return parsePyModule(rel, data)
}

func parsePyModule(rel string, data []byte) (*pyModule, error) {
	assigns, imports, err := pysource.Bindings(string(data))
	if err != nil {
		var se *pysource.SyntaxError
		if errors.As(err, &se) {
			return nil, &TableError{File: rel, Line: se.Line, Msg: "is not valid Python: " + se.Msg + "; fix the syntax so that python can import it"}
		}
		return nil, &TableError{File: rel, Msg: err.Error()}
	}
	m := &pyModule{file: rel, src: data, last: map[string]pysource.Assignment{}, imports: map[string]pysource.FromImport{}}
	for _, a := range assigns {
		m.last[a.Name] = a
	}
	for _, im := range imports {
		m.imports[im.Alias] = im
	}
	return m, nil
}

// table returns the literal bound to a module-level name; ok is false when
// the module does not assign it.
func (m *pyModule) table(name string) (pysource.Value, int, bool, error) {
	a, ok := m.last[name]
	if !ok {
		return pysource.Value{}, 0, false, nil
	}
	if a.Augmented {
		return pysource.Value{}, 0, false, m.errf(a.Line, name, "is changed by an augmented assignment; write the whole table as one literal")
	}
	if a.ValueErr != nil {
		return pysource.Value{}, 0, false, m.errf(a.Line, name, "is not a literal: %v; write it as a literal, as Miles does", a.ValueErr)
	}
	return a.Value, a.Line, true, nil
}

func (m *pyModule) errf(line int, name, format string, args ...any) error {
	return &TableError{File: m.file, Line: line, Name: name, Msg: fmt.Sprintf(format, args...), form: true}
}

// maxConstantHops bounds the chain of module-level constants a name may go
// through (A = B, B = "x"), which also stops a cycle.
const maxConstantHops = 8

// resolve replaces a bare name by the value of the module-level constant it
// names, or of the literal a `from tests.ci.MOD import NAME` brings in from
// that module; enum members (dotted names) and other values are returned as
// they are. Python's later binding of a name wins.
func (m *pyModule) resolve(v pysource.Value) pysource.Value { return m.resolveAt(v, 0) }

// maxImportDepth bounds how deep values copied out of another module nest,
// names resolved inside them included (a module may import itself).
const maxImportDepth = 32

// resolveAt is resolve within a value copied out of another module, depth
// levels down.
func (m *pyModule) resolveAt(v pysource.Value, depth int) pysource.Value {
	cur, use, crossed := m, v.Line, false
	for hops := 0; v.Kind == pysource.NameValue && !strings.Contains(v.Name, ".") && hops < maxConstantHops; hops++ {
		a, assigned := cur.last[v.Name]
		if im, imported := cur.imports[v.Name]; imported && (!assigned || im.Line > a.Line) {
			next := cur.sibling(im.Module)
			if next == nil {
				return v
			}
			cur, v, crossed = next, pysource.Value{Kind: pysource.NameValue, Name: im.Name, Line: use}, true
			continue
		}
		if !assigned || a.Augmented || a.ValueErr != nil {
			return v
		}
		v = a.Value
		v.Line = use // report the use, not the definition
	}
	if crossed {
		v = cur.localize(v, use, depth)
	}
	return v
}

// localize copies a value read in this module for use in another: names
// inside it resolve here, and every line becomes the line of the use, since
// the table reports its elements in the file that uses it.
func (m *pyModule) localize(v pysource.Value, line, depth int) pysource.Value {
	m.mods.budget--
	if m.mods.budget < 0 || depth > maxImportDepth {
		return pysource.Value{Kind: pysource.NameValue, Name: "...", Line: line}
	}
	v.Line = line
	copyAll := func(in []pysource.Value) []pysource.Value {
		if in == nil {
			return nil
		}
		out := make([]pysource.Value, len(in))
		for i, e := range in {
			if e.Kind == pysource.NameValue && !strings.Contains(e.Name, ".") {
				e = m.resolveAt(e, depth+1)
			}
			out[i] = m.localize(e, line, depth+1)
		}
		return out
	}
	v.Keys, v.Elems = copyAll(v.Keys), copyAll(v.Elems)
	return v
}

// str reads a string, or a module-level constant holding one.
func (m *pyModule) str(v pysource.Value, table, what string) (string, error) {
	r := m.resolve(v)
	if r.Kind != pysource.StrValue {
		return "", m.errf(v.Line, table, "%s must be a string (or a module-level string constant), not %s", what, m.describe(r))
	}
	return r.Str, nil
}

// collectionCalls are the calls that build a collection from a literal
// (or from a dict: its keys).
var collectionCalls = map[string]bool{"frozenset": true, "set": true, "tuple": true, "list": true, "sorted": true}

// strs reads a list, tuple, set, frozenset(...), set(...), tuple(...) or
// list(...) of strings; a single string too when single is set (str.startswith
// and str.endswith take one).
func (m *pyModule) strs(v pysource.Value, table string, single bool) ([]string, []int, error) {
	v = m.resolve(v)
	sorted := false
	if v.Kind == pysource.CallValue {
		if !collectionCalls[v.Name] || len(v.Elems) > 1 {
			return nil, nil, m.errf(v.Line, table, "must be a literal collection of strings, not a call of %s(); write e.g. frozenset({\"a\", \"b\"})", v.Name)
		}
		if len(v.Elems) == 0 {
			return []string{}, []int{}, nil
		}
		sorted = v.Name == "sorted"
		v = m.resolve(v.Elems[0])
	}
	if single && v.Kind == pysource.StrValue {
		return []string{v.Str}, []int{v.Line}, nil
	}
	switch v.Kind {
	case pysource.ListValue, pysource.TupleValue, pysource.SetValue:
	case pysource.DictValue:
		v.Elems = v.Keys // iterating a dict gives its keys
	default:
		return nil, nil, m.errf(v.Line, table, "must be a list, tuple or set of strings, not %s", m.describe(v))
	}
	type elem struct {
		s    string
		line int
	}
	elems := make([]elem, 0, len(v.Elems))
	for _, el := range v.Elems {
		s, err := m.str(el, table, "each element")
		if err != nil {
			return nil, nil, err
		}
		elems = append(elems, elem{s, el.Line})
	}
	if sorted {
		slices.SortStableFunc(elems, func(a, b elem) int { return strings.Compare(a.s, b.s) })
	}
	out := make([]string, len(elems))
	lines := make([]int, len(elems))
	for i, e := range elems {
		out[i], lines[i] = e.s, e.line
	}
	return out, lines, nil
}

// describe is describeValue, telling where an imported name comes from.
func (m *pyModule) describe(v pysource.Value) string {
	d := describeValue(v)
	if im, ok := m.imports[v.Name]; ok && v.Kind == pysource.NameValue {
		d += fmt.Sprintf(" (from %s import %s, where miles-ci finds no literal of that name)", im.Module, im.Name)
	}
	return d
}

func describeValue(v pysource.Value) string {
	switch v.Kind {
	case pysource.NameValue:
		return "the name " + v.Name
	case pysource.CallValue:
		return "a call of " + v.Name + "()"
	}
	return v.Kind.String()
}

// setOrigin records where a table came from and the line of each element.
func (t *Tables) setOrigin(table, file string, line int, elems []string, lines []int) {
	for i := range t.Origins {
		if t.Origins[i].Table == table {
			t.Origins[i] = Origin{Table: table, File: file, Line: line}
		}
	}
	t.setLines(table, elems, lines)
}

// readLabels reads KNOWN_LABELS: a dict of label name to description (or a
// collection of names), in order.
func (t *Tables) readLabels(m *pyModule) error {
	v, line, ok, err := m.table(TableLabels)
	if err != nil || !ok {
		return err
	}
	v = m.resolve(v)
	var labels []Label
	var names []string
	var lines []int
	seen := map[string]int{}
	add := func(name, desc string, at int) {
		if i, dup := seen[name]; dup {
			labels[i].Description = desc // a repeated key keeps its place and takes the last value
			return
		}
		seen[name] = len(labels)
		labels = append(labels, Label{Name: name, Description: desc})
		names, lines = append(names, name), append(lines, at)
	}
	if v.Kind == pysource.DictValue {
		for i, k := range v.Keys {
			name, err := m.str(k, TableLabels, "each key")
			if err != nil {
				return err
			}
			desc := ""
			if d := m.resolve(v.Elems[i]); d.Kind == pysource.StrValue {
				desc = d.Str
			}
			add(name, desc, k.Line)
		}
	} else {
		list, at, err := m.strs(v, TableLabels, false)
		if err != nil {
			return err
		}
		for i, name := range list {
			add(name, "", at[i])
		}
	}
	t.Labels = labels
	t.setOrigin(TableLabels, m.file, line, names, lines)
	return nil
}

// backendKeys are the names a CI_SUITES key may end with: each backend's
// HWBackend member name and its value.
var backendKeys = func() map[string]Backend {
	keys := map[string]Backend{}
	for _, p := range backendProfiles {
		keys[p.Enum], keys[string(p.Backend)] = p.Backend, p.Backend
	}
	return keys
}()

// Before CI_SUITES, Miles' run_suite.py kept the suites of regular runs in
// PER_COMMIT_SUITES and those of nightly runs in NIGHTLY_SUITES (same form);
// together they are that checkout's suites.
const (
	tablePerCommitSuites = "PER_COMMIT_SUITES"
	tableNightlySuites   = "NIGHTLY_SUITES"
)

// readSuites reads CI_SUITES: a dict of backend (HWBackend.CPU, ... or
// "cpu", ...) to its suites; without it, the older PER_COMMIT_SUITES and
// NIGHTLY_SUITES.
func (t *Tables) readSuites(m *pyModule) error {
	names := []string{TableSuites}
	if _, ok := m.last[TableSuites]; !ok {
		names = []string{tablePerCommitSuites, tableNightlySuites}
	}
	suites := BackendSuites{CPU: []string{}, CUDA: []string{}, ROCM: []string{}}
	var all []string
	var lines []int
	origin := 0
	for _, name := range names {
		v, line, ok, err := m.table(name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if origin == 0 {
			origin = line
		}
		got, at, err := m.suiteDict(v, line, name)
		if err != nil {
			return err
		}
		for _, b := range Backends() {
			dst := suites.of(b)
			for _, s := range got.Of(b) {
				if !slices.Contains(*dst, s) {
					*dst = append(*dst, s)
					all, lines = append(all, s), append(lines, at[s])
				}
			}
		}
	}
	if origin == 0 {
		return nil
	}
	t.Suites = suites
	t.setOrigin(TableSuites, m.file, origin, all, lines)
	return nil
}

// of returns a pointer to one backend's list.
func (s *BackendSuites) of(b Backend) *[]string {
	switch b {
	case CPU:
		return &s.CPU
	case CUDA:
		return &s.CUDA
	}
	return &s.ROCM
}

// suiteDict reads one dict of backend to suites and the line of each suite.
func (m *pyModule) suiteDict(v pysource.Value, line int, table string) (BackendSuites, map[string]int, error) {
	v = m.resolve(v)
	if v.Kind != pysource.DictValue {
		return BackendSuites{}, nil, m.errf(line, table, "must be a dict of backend to suites, e.g. {HWBackend.CPU: [\"stage-a-cpu\"]}, not %s", m.describe(v))
	}
	suites := BackendSuites{}
	at := map[string]int{}
	for i, k := range v.Keys {
		key := m.resolve(k)
		var name string
		switch key.Kind {
		case pysource.NameValue:
			name = key.Name[strings.LastIndex(key.Name, ".")+1:]
		case pysource.StrValue:
			name = key.Str
		}
		b, known := backendKeys[name]
		if !known {
			if key.Kind == pysource.NameValue && strings.Contains(key.Name, ".") {
				continue // a backend the rules do not model (rules §1 has cpu, cuda and rocm)
			}
			return BackendSuites{}, nil, m.errf(k.Line, table, "has a key that is not a backend: %s; write HWBackend.CPU, HWBackend.CUDA or HWBackend.ROCM", describeValue(key))
		}
		list, lines, err := m.strs(v.Elems[i], table, false)
		if err != nil {
			return BackendSuites{}, nil, err
		}
		*suites.of(b) = list
		for j, s := range list {
			if _, seen := at[s]; !seen {
				at[s] = lines[j]
			}
		}
	}
	return suites, at, nil
}

// readStageSelection reads PR_GPU_STAGES, _BROAD_PR_SCOPES and the no-GPU paths.
func (t *Tables) readStageSelection(m *pyModule) error {
	for _, tb := range []struct {
		name   string
		dst    *[]string
		single bool
	}{
		{TablePRGPUStages, &t.PRGPU, false},
		{TableBroadScopes, &t.BroadScopes, false},
		{TableNoGPUPaths, &t.NoGPUPaths, false},
		{TableNoGPUPrefixes, &t.NoGPUPrefixes, true},
		{TableNoGPUSuffixes, &t.NoGPUSuffixes, true},
	} {
		v, line, ok, err := m.table(tb.name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		list, lines, err := m.strs(v, tb.name, tb.single)
		if err != nil {
			return err
		}
		t.setOrigin(tb.name, m.file, line, list, lines)
		list = slices.Clone(list)
		slices.Sort(list)
		*tb.dst = slices.Compact(list)
	}
	return nil
}

// readCrons reads SCHEDULE_POLICIES: a dict of cron to (cadence, raw labels),
// or to a cadence alone.
func (t *Tables) readCrons(m *pyModule) error {
	v, line, ok, err := m.table(TableCrons)
	if err != nil || !ok {
		return err
	}
	v = m.resolve(v)
	if v.Kind != pysource.DictValue {
		return m.errf(line, TableCrons, "must be a dict of cron to (cadence, labels), e.g. {\"0 15 * * 0-5\": (NIGHTLY_CADENCE, ())}, not %s", m.describe(v))
	}
	var crons []Cron
	var keys []string
	var lines []int
	for i, k := range v.Keys {
		cron, err := m.str(k, TableCrons, "each cron")
		if err != nil {
			return err
		}
		c := Cron{Cron: cron, RawLabels: []string{}}
		val := m.resolve(v.Elems[i])
		switch {
		case val.Kind == pysource.TupleValue && len(val.Elems) == 2:
			cadence, err := m.str(val.Elems[0], TableCrons, "the cadence of "+pysource.Repr(cron))
			if err != nil {
				return err
			}
			c.Cadence = Cadence(cadence)
			if c.RawLabels, _, err = m.strs(val.Elems[1], TableCrons, false); err != nil {
				return err
			}
		case val.Kind == pysource.StrValue:
			c.Cadence = Cadence(val.Str)
		default:
			return m.errf(val.Line, TableCrons, "maps %s to %s; write (CADENCE, (LABEL, ...)), e.g. (NIGHTLY_CADENCE, ())", pysource.Repr(cron), describeValue(val))
		}
		if j := slices.IndexFunc(crons, func(x Cron) bool { return x.Cron == cron }); j >= 0 {
			crons[j] = c // a repeated key keeps its place and takes the last value
			continue
		}
		crons = append(crons, c)
		keys, lines = append(keys, cron), append(lines, k.Line)
	}
	t.Crons = crons
	t.setOrigin(TableCrons, m.file, line, keys, lines)
	return nil
}
