package metricgate

import (
	"errors"
	"fmt"
	"slices"

	"github.com/radixark/miles-ci/policy/pysource"
)

// The checkout's files that declare its gate (rules §16).
const (
	GateFile        = "tests/ci/metric_history/gate.py"
	RegisterFile    = "tests/ci/metric_history/register.py"
	ConstraintsFile = "tests/ci/metric_history/constraints.py"
)

// RecordDirEnv is the variable the harness reads for the folder where each
// attempt's metric records go (ci_utils.CI_GATE_RECORD_DIR_ENV).
const RecordDirEnv = "MILES_CI_GATE_RECORD_DIR"

// SuiteSource is where the baseline's suite comes from.
type SuiteSource string

const (
	// DeclaredSuite: the suite the test file's register_*_ci() call names
	// (Miles 31f1ca9: evaluate_gate keys on registry.suite).
	DeclaredSuite SuiteSource = "declared"
	// ExecutingSuite: the stage the run executed on (Miles fa787d595,
	// f030484dd: evaluate_gate(..., executing_suite=...)), which differs
	// from the declared one for a test dispatched to another GPU generation.
	ExecutingSuite SuiteSource = "executing"
)

// Form is what a checkout's gate code declares: the one place miles-ci keeps
// the gate's rules that differ between Miles states, read from the
// checkout's own metric_history files.
type Form struct {
	// Name names the form: "31f1ca9" or "executing-suite".
	Name string `json:"name"`
	// Suite is where the baseline's suite comes from.
	Suite SuiteSource `json:"suite"`
	// HistoryLimit is how many recent trusted values make a baseline
	// (evaluate_gate's history_limit default).
	HistoryLimit int `json:"history_limit"`
	// BaselineCadences are the cadences whose runs write the baseline
	// (ci_policy: write_baseline); a PR labelled nightly runs at nightly.
	BaselineCadences []string `json:"baseline_cadences"`
	// defaults is register.py's GATE_DEFAULTS: metric key to its entry.
	defaults pyLit
}

// forms are the gate's forms, the first whose marker evaluate_gate's
// parameters name applying ("" always applies).
var forms = []struct {
	name   string
	marker string
	suite  SuiteSource
}{
	{"executing-suite", "executing_suite", ExecutingSuite},
	{"31f1ca9", "", DeclaredSuite},
}

// baselineCadences are ci_policy's write_baseline cadences at every state
// with a gate (31f1ca9 and f030484dd: nightly and weekly).
var baselineCadences = []string{"nightly", "weekly"}

// constraintSchema is constraints.CONSTRAINT_SCHEMA as miles-ci implements
// it: every band param a float >= 0, optional, default 0.0, in this order.
var constraintSchema = []string{"rel_up", "abs_floor_up", "rel_down", "abs_floor_down"}

// ErrNoGate is a checkout without the metric-history gate.
var ErrNoGate = errors.New("the checkout has no metric-history gate (" + GateFile + ")")

// ReadForm reads the gate's form from the checkout's files (src gives a
// file's bytes, nil when it is absent). A checkout without gate.py has no
// gate (ErrNoGate); one whose tables miles-ci cannot read is an error that
// names the file.
func ReadForm(src func(rel string) ([]byte, error)) (Form, error) {
	gate, err := src(GateFile)
	if err != nil {
		return Form{}, err
	}
	if gate == nil {
		return Form{}, ErrNoGate
	}
	params, limit, err := evaluateGateParams(gate)
	if err != nil {
		return Form{}, fmt.Errorf("%s: %w", GateFile, err)
	}
	f := Form{HistoryLimit: limit, BaselineCadences: slices.Clone(baselineCadences)}
	for _, fm := range forms {
		if fm.marker == "" || slices.Contains(params, fm.marker) {
			f.Name, f.Suite = fm.name, fm.suite
			break
		}
	}
	reg, err := src(RegisterFile)
	if err != nil {
		return Form{}, err
	}
	if reg == nil {
		return Form{}, fmt.Errorf("%s is missing beside %s; the checkout's gate is incomplete", RegisterFile, GateFile)
	}
	if f.defaults, err = topLevelLiteral(reg, "GATE_DEFAULTS"); err != nil {
		return Form{}, fmt.Errorf("%s: %w", RegisterFile, err)
	}
	if f.defaults.kind != litDict {
		return Form{}, fmt.Errorf("%s: GATE_DEFAULTS is a %s, not a dict; miles-ci reads the table as a literal", RegisterFile, f.defaults.typeName())
	}
	cons, err := src(ConstraintsFile)
	if err != nil {
		return Form{}, err
	}
	if cons != nil {
		if err := checkSchema(cons); err != nil {
			return Form{}, fmt.Errorf("%s: %w", ConstraintsFile, err)
		}
	}
	return f, nil
}

// checkSchema checks that the checkout's CONSTRAINT_SCHEMA is the band
// miles-ci implements; another is a gate ahead of miles-ci.
func checkSchema(src []byte) error {
	schema, err := topLevelLiteral(src, "CONSTRAINT_SCHEMA")
	if err != nil {
		return err
	}
	ok := schema.kind == litDict && slices.Equal(schema.keys, constraintSchema)
	for _, e := range schema.elems {
		ok = ok && e.kind == litTuple && len(e.elems) == 3 && e.elems[0].kind == litStr && e.elems[0].s == "float_nonneg" &&
			e.elems[1].kind == litBool && !e.elems[1].b && e.elems[2].kind == litFloat && e.elems[2].f == 0
	}
	if !ok {
		return fmt.Errorf("CONSTRAINT_SCHEMA is %s; miles-ci knows the band params %v (each a float >= 0, default 0.0): the checkout's gate is ahead of miles-ci", schema.repr(), constraintSchema)
	}
	return nil
}

// topLevelLiteral is the literal a module assigns to name at its top level
// (NAME = ... or NAME: annotation = ...), read as a table.
func topLevelLiteral(src []byte, name string) (pyLit, error) {
	var value []pysource.Token
	found := false
	depth := 0
	err := pysource.Scan(pysource.Normalize(string(src)), func(toks []pysource.Token) error {
		for len(toks) > 0 && (toks[0].Kind == pysource.Indent || toks[0].Kind == pysource.Dedent) {
			depth += map[bool]int{true: 1, false: -1}[toks[0].Kind == pysource.Indent]
			toks = toks[1:]
		}
		if depth != 0 || len(toks) < 3 || toks[0].Kind != pysource.Name || toks[0].Text != name {
			return nil
		}
		for k := 1; k < len(toks); k++ {
			t := toks[k]
			if t.Kind == pysource.Op && (t.Text == "(" || t.Text == "[" || t.Text == "{") {
				if k = pysource.Matching(toks, k); k < 0 {
					return nil
				}
				continue
			}
			if t.Kind == pysource.Op && t.Text == "=" {
				value = slices.Clone(toks[k+1:])
				if n := len(value); n > 0 && value[n-1].Kind == pysource.Newline {
					value = value[:n-1]
				}
				found = true
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return pyLit{}, fmt.Errorf("does not parse: %w", err)
	}
	if !found {
		return pyLit{}, fmt.Errorf("assigns no %s at its top level", name)
	}
	l, err := readLiteral(value, true)
	if err != nil {
		return pyLit{}, fmt.Errorf("%s is not a literal miles-ci reads: %w", name, err)
	}
	return l, nil
}

// evaluateGateParams are the parameter names of gate.py's top-level def
// evaluate_gate, and the default of its history_limit.
func evaluateGateParams(src []byte) ([]string, int, error) {
	var params []string
	limit := 0
	found := false
	depth := 0
	err := pysource.Scan(pysource.Normalize(string(src)), func(toks []pysource.Token) error {
		for len(toks) > 0 && (toks[0].Kind == pysource.Indent || toks[0].Kind == pysource.Dedent) {
			depth += map[bool]int{true: 1, false: -1}[toks[0].Kind == pysource.Indent]
			toks = toks[1:]
		}
		if found || depth != 0 || len(toks) < 4 || toks[0].Text != "def" || toks[1].Text != "evaluate_gate" || toks[2].Text != "(" {
			return nil
		}
		end := pysource.Matching(toks, 2)
		if end < 0 {
			return nil
		}
		found = true
		for _, piece := range pysource.SplitTop(toks[3:end], ",") {
			if len(piece) == 0 || piece[0].Kind != pysource.Name {
				continue
			}
			params = append(params, piece[0].Text)
			if piece[0].Text == "history_limit" && len(piece) >= 2 {
				if n, err := pysource.ParseNumber(piece[len(piece)-1].Text); err == nil && n.Kind == pysource.Int && piece[len(piece)-2].Text == "=" {
					limit = int(n.Value)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("does not parse: %w", err)
	}
	if !found {
		return nil, 0, errors.New("defines no evaluate_gate at its top level; the checkout's gate is not one miles-ci knows")
	}
	if limit < 1 || limit > 1000 {
		return nil, 0, errors.New("evaluate_gate's history_limit has no int default miles-ci reads")
	}
	return params, limit, nil
}

// WritesBaseline says whether a run of this cadence stores its verdict and
// values (run_gate_hook's write_baseline); other runs show a shadow verdict.
func (f Form) WritesBaseline(cadence string) bool {
	return slices.Contains(f.BaselineCadences, cadence)
}
