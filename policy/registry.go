package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// registerFuncs maps each registration function to its backend
// (BackendProfile.RegisterFunc).
var registerFuncs = func() map[string]Backend {
	funcs := map[string]Backend{}
	for _, p := range backendProfiles {
		funcs[p.RegisterFunc] = p.Backend
	}
	return funcs
}()

// positionalParams are the only parameters that may be passed by position.
var positionalParams = []string{"est_time", "suite"}

// RegistryError is a test file whose registration Miles CI refuses.
type RegistryError struct {
	// File is the repo-relative test file.
	File string
	// Line is the 1-based line of the offending call, or 0.
	Line int
	// Msg is Miles' own wording of the fault (after "FILE: ").
	Msg string
	// Fix says how to mend it.
	Fix string

	// fault, fn and arg say what kind of fault it is, in which registration
	// function and on which argument, for declineForm.
	fault   registryFault
	fn, arg string
}

func (e *RegistryError) Error() string {
	var b strings.Builder
	b.WriteString(e.File + ": " + e.Msg)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	if e.Fix != "" {
		b.WriteString("; " + e.Fix)
	}
	return b.String()
}

const literalFix = `write the value itself, e.g. register_cuda_ci(est_time=600, suite="stage-c-2-gpu-h200", labels=["megatron"])`

// ParseFile reads the register_*_ci(...) calls of one test file's source,
// checking labels against the built-in tables (Tables.ParseFile checks them
// against a checkout's). rel is the repo-relative path used in errors and in
// the registrations.
func ParseFile(rel string, src []byte) ([]Registration, error) {
	return parseSource(rel, string(src), builtin)
}

// ParseFile reads the register_*_ci(...) calls of one test file's source,
// checking labels against these tables.
func (t *Tables) ParseFile(rel string, src []byte) ([]Registration, error) {
	return parseSource(rel, string(src), t.or())
}

func parseSource(rel, src string, t *Tables) ([]Registration, error) {
	calls, err := registrationCalls(rel, src)
	if err != nil {
		return nil, err
	}
	return t.callRegistrations(rel, calls)
}

// registrationCalls returns the top-level register_*_ci(...) calls of a
// test file's source; source Python refuses is a *RegistryError.
func registrationCalls(rel, src string) ([]pysource.Call, error) {
	calls, err := pysource.TopLevelCalls(src, func(name string) bool {
		_, ok := registerFuncs[name]
		return ok
	})
	if err != nil {
		if se, ok := err.(*pysource.SyntaxError); ok {
			return nil, &RegistryError{File: rel, Line: se.Line, Msg: "not valid Python: " + se.Msg,
				Fix: "fix the syntax so that python -c 'import ast; ast.parse(open(FILE).read())' accepts the file"}
		}
		return nil, &RegistryError{File: rel, Msg: err.Error()}
	}
	return calls, nil
}

// callRegistrations applies Miles' argument rules to a file's calls.
func (t *Tables) callRegistrations(rel string, calls []pysource.Call) ([]Registration, error) {
	regs := make([]Registration, 0, len(calls))
	for _, c := range calls {
		r, err := parseCall(rel, c, t)
		if err != nil {
			return nil, err
		}
		regs = append(regs, r)
	}
	return regs, nil
}

// parseCall applies Miles' argument rules to one call, checking in the same
// order as tests/ci/ci_register.py so the first fault reported is the same.
func parseCall(rel string, c pysource.Call, t *Tables) (Registration, error) {
	fn := c.Func
	fail := func(msg, fix string) (Registration, error) {
		return Registration{}, &RegistryError{File: rel, Line: c.Line, Msg: msg, Fix: fix}
	}
	// failAs also records the fault for declineForm; fn and arg are copied out
	// of the source buffer, which the caller reuses.
	failAs := func(fault registryFault, arg, msg, fix string) (Registration, error) {
		return Registration{}, &RegistryError{File: rel, Line: c.Line, Msg: msg, Fix: fix, fault: fault, fn: strings.Clone(fn), arg: strings.Clone(arg)}
	}
	var positional []pysource.Arg
	for _, a := range c.Args {
		switch a.Kind {
		case pysource.Starred:
			return fail(fmt.Sprintf("starred arguments are not supported in %s()", fn),
				"pass est_time and suite as literal values")
		case pysource.Positional:
			positional = append(positional, a)
		}
	}
	if len(positional) > len(positionalParams) {
		return failAs(faultPositional, "", fmt.Sprintf("too many positional arguments in %s(); only ['est_time', 'suite'] may be positional (labels and later are keyword-only)", fn),
			"pass labels=, nightly= and disabled= by keyword")
	}
	parsed := map[string]pysource.Expr{}
	for i, a := range positional {
		name := positionalParams[i]
		if a.Value.Node != "Constant" {
			return fail(fmt.Sprintf("%s in %s() must be a literal constant", name, fn), literalFix)
		}
		parsed[name] = a.Value
	}
	var labels, hardware []string
	for _, a := range c.Args {
		switch a.Kind {
		case pysource.DoubleStar:
			return fail(fmt.Sprintf("**kwargs are not supported in %s()", fn), "pass each argument by its own keyword")
		case pysource.Keyword:
		default:
			continue
		}
		if _, dup := parsed[a.Keyword]; dup {
			return fail(fmt.Sprintf("duplicated argument '%s' in %s()", a.Keyword, fn), "give each argument once")
		}
		accepted, implemented := t.keywordStatus(a.Keyword)
		if !accepted {
			return failAs(faultUnknownKeyword, a.Keyword, fmt.Sprintf("unknown argument '%s' in %s()", a.Keyword, fn),
				"valid arguments are "+keywordList(t.KnownKeywords()))
		}
		if !implemented {
			// The checkout's own code accepts it: miles-ci lags, the test is fine.
			return Registration{}, &AheadError{File: rel, Line: c.Line, Construct: pysource.Repr(a.Keyword),
				Detail: "a registration keyword of " + t.keywordLine(a.Keyword) + " _VALID_KWARGS"}
		}
		switch a.Keyword {
		case "labels":
			l, err := labelList(a.Value, fmt.Sprintf("labels in %s()", fn))
			if err != "" {
				return fail(err, `write labels as a list of strings, e.g. labels=["megatron", "short"]`)
			}
			labels = l
		case "hardware":
			l, err := labelList(a.Value, fmt.Sprintf("hardware in %s()", fn))
			if err != "" {
				return fail(err, `write hardware as a list of arches, e.g. hardware=["hopper", "blackwell"]`)
			}
			hardware = l
		default:
			if a.Value.Node == "Constant" {
				break
			}
			return fail(fmt.Sprintf("%s in %s() must be a literal constant", a.Keyword, fn), literalFix)
		}
		parsed[a.Keyword] = a.Value
	}
	backend := registerFuncs[fn]
	est, ok := parsed["est_time"]
	if !ok {
		return fail(fmt.Sprintf("est_time is required in %s()", fn), "add est_time=SECONDS, e.g. est_time=300")
	}
	suiteExpr, ok := parsed["suite"]
	if !ok {
		return fail(fmt.Sprintf("suite is required in %s()", fn), `add suite="STAGE", e.g. suite="stage-a-cpu"`)
	}
	var estTime float64
	switch est.Const.Type {
	case "int", "float":
		if est.Const.Overflow {
			return fail(fmt.Sprintf("est_time in %s() is too large to convert to float", fn), "give the estimate in seconds, e.g. est_time=300")
		}
		estTime = est.Const.Num
	case "bool": // Python's bool is an int: True counts as 1
		if est.Const.Bool {
			estTime = 1
		}
	default:
		return fail(fmt.Sprintf("est_time must be a number in %s()", fn), "give the estimate in seconds, e.g. est_time=300")
	}
	if suiteExpr.Const.Type != "str" {
		return fail(fmt.Sprintf("suite must be a string in %s()", fn), `e.g. suite="stage-a-cpu"`)
	}
	valid := "[" + strings.Join(t.sortedKnownLabels(), ", ") + "]"
	if ProfileOf(backend).NeedsLabels && len(labels) == 0 {
		// A checkout whose marker gives labels a default (Miles before
		// 2026-08-16) accepts this: declineForm makes it an AheadError.
		return failAs(faultNoLabels, "", fmt.Sprintf("labels in %s() must contain at least one domain label", fn),
			`add labels=[...] with a label from `+valid+`, e.g. labels=["megatron"]`)
	}
	nightly := false
	if v, ok := parsed["nightly"]; ok {
		if v.Const.Type != "bool" {
			return fail(fmt.Sprintf("nightly must be a boolean in %s()", fn), "write nightly=True or nightly=False")
		}
		nightly = v.Const.Bool
	}
	var disabled *string
	if v, ok := parsed["disabled"]; ok {
		switch v.Const.Type {
		case "NoneType":
		case "str":
			reason := v.Const.Str
			disabled = &reason
		default:
			return fail(fmt.Sprintf("disabled must be a string or None in %s()", fn), `write the reason, e.g. disabled="flaky on H200, see #123"`)
		}
	}
	if t.spec().hardware {
		if msg, fix := t.checkHardware(fn, backend, suiteExpr.Const.Str, hardware); msg != "" {
			return fail(msg, fix)
		}
	}
	numGPUs := 0
	if v, ok := parsed[poolKeyword]; ok && t.spec().numGPUs {
		n, msg, fix := t.checkNumGPUs(fn, backend, suiteExpr.Const.Str, v)
		if msg != "" {
			return fail(msg, fix)
		}
		numGPUs = n
	}
	var unknown []string
	for _, l := range labels {
		if !t.IsKnownLabel(l) {
			unknown = append(unknown, l)
		}
	}
	if len(unknown) > 0 {
		return fail(fmt.Sprintf("unknown labels %s in %s(); valid labels: %s. To add a new label: edit tests/ci/labels.py + create matching `run-ci-<label>` in GitHub repo Settings -> Labels.",
			pysource.ReprList(unknown), fn, valid), "use one of the valid labels")
	}
	if labels == nil {
		labels = []string{}
	}
	// Copy every string out of the source: the caller may reuse its buffer.
	for i, l := range labels {
		labels[i] = strings.Clone(l)
	}
	for i, h := range hardware {
		hardware[i] = strings.Clone(h)
	}
	if backend != CUDA {
		hardware = nil
	}
	if disabled != nil {
		reason := strings.Clone(*disabled)
		disabled = &reason
	}
	return Registration{
		File:     rel,
		Backend:  backend,
		EstTime:  estTime,
		Suite:    strings.Clone(suiteExpr.Const.Str),
		Labels:   labels,
		Hardware: hardware,
		NumGPUs:  numGPUs,
		Nightly:  nightly,
		Disabled: disabled,
		Line:     c.Line,
	}, nil
}

// labelList reads a labels= value: a list of string literals, or None.
// It returns Miles' message when the value is anything else.
func labelList(e pysource.Expr, context string) ([]string, string) {
	if e.Node == "Constant" && e.Const.Type == "NoneType" {
		return []string{}, ""
	}
	if e.Node != "List" {
		return nil, fmt.Sprintf("%s must be a list of string literals or None (got %s)", context, e.Node)
	}
	out := []string{}
	for _, el := range e.Elems {
		if el.Node != "Constant" {
			return nil, context + " must be a list of string literals (non-literal element)"
		}
		if el.Const.Type != "str" {
			return nil, fmt.Sprintf("%s must be a list of string literals (got %s element)", context, el.Const.Type)
		}
		out = append(out, el.Const.Str)
	}
	return out, ""
}

// checkHardware applies the GPU-generation rules to hardware= (rules
// §11.2), in ci_register.py's order; it returns Miles' message and a fix,
// or "" when the list is right.
func (t *Tables) checkHardware(fn string, b Backend, suite string, hardware []string) (msg, fix string) {
	arches := t.or().Arches
	if b != CUDA {
		if len(hardware) > 0 {
			return fmt.Sprintf("hardware in %s() is CUDA-only; CPU has no GPU generation and ROCm is a separate backend", fn), "drop hardware="
		}
		return "", ""
	}
	archFix := "list the GPU generations the test supports, from " + pysource.ReprList(arches)
	if len(hardware) == 0 {
		return fmt.Sprintf("hardware in %s() must list at least one arch from %s", fn, pysource.ReprList(arches)), archFix
	}
	var unknown []string
	for _, h := range hardware {
		if !slices.Contains(arches, h) {
			unknown = append(unknown, h)
		}
	}
	if len(unknown) > 0 {
		return fmt.Sprintf("unknown arches %s in %s(); valid arches: %s", pysource.ReprList(unknown), fn, pysource.ReprList(arches)), archFix
	}
	seen := map[string]bool{}
	for _, h := range hardware {
		if seen[h] {
			return fmt.Sprintf("duplicated arch in %s() hardware=%s", fn, pysource.ReprList(hardware)), "give each arch once"
		}
		seen[h] = true
	}
	home, ok := t.cudaStage(suite)
	if !ok {
		names := make([]string, 0, len(t.or().CUDAStages))
		for _, s := range t.or().CUDAStages {
			names = append(names, s.Name)
		}
		slices.Sort(names)
		return fmt.Sprintf("unknown CUDA suite %s in %s(); valid suites: %s", pysource.Repr(suite), fn, pysource.ReprList(names)),
			"home the test on a stage of " + HardwareFile + " CUDA_STAGES"
	}
	if first := t.AutoArch(hardware); home.Arch != first {
		return fmt.Sprintf("suite %s is %s but hardware=%s runs on %s by default; a test's home stage must be on its first supported arch",
				pysource.Repr(suite), home.Arch, pysource.ReprList(hardware), first),
			"home the test on a " + first + " stage, or list " + pysource.Repr(home.Arch) + " in hardware="
	}
	return "", ""
}

// checkNumGPUs applies the B200 pool rules to num_gpus= (rules §11.8; the
// messages rest on Miles' tests/ci/test/test_ci_register.py, whose patterns
// they match: "num_gpus is CUDA-only", "num_gpus must be an integer",
// "exceeds the home suite"). It runs after checkHardware, so a CUDA suite is
// a CUDA_STAGES stage here.
func (t *Tables) checkNumGPUs(fn string, b Backend, suite string, v pysource.Expr) (n int, msg, fix string) {
	if b != CUDA {
		return 0, fmt.Sprintf("num_gpus is CUDA-only in %s(); CPU and ROCm tests take no GPU count", fn), "drop num_gpus="
	}
	most := t.spec().maxNumGPUs
	c := v.Const
	if c.Type != "int" || c.Overflow || c.Num < 1 || c.Num > float64(most) || c.Num != float64(int(c.Num)) {
		return 0, fmt.Sprintf("num_gpus must be an integer from 1 to %d in %s() (got %s)", most, fn, constRepr(c)),
			fmt.Sprintf("give the GPUs the test needs, e.g. num_gpus=2 (1 to %d)", most)
	}
	n = int(c.Num)
	if home, ok := t.cudaStage(suite); ok && n > home.NumGPUs {
		return 0, fmt.Sprintf("num_gpus=%d in %s() exceeds the home suite %s, which has %d GPUs", n, fn, pysource.Repr(suite), home.NumGPUs),
			"home the test on a stage with enough GPUs, or lower num_gpus"
	}
	return n, "", ""
}

// constRepr is a literal as Python's repr writes it, for a message.
func constRepr(c *pysource.Constant) string {
	switch c.Type {
	case "int":
		if c.Overflow {
			return "a number too large"
		}
		return strconv.FormatFloat(c.Num, 'f', -1, 64)
	case "str":
		return pysource.Repr(c.Str)
	case "bool":
		return pyBool(c.Bool)
	case "NoneType":
		return "None"
	case "float":
		return pysource.FloatRepr(c.Num)
	}
	return c.Type
}
