package metricgate

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// Spec is one register_ci_gate declaration of a test file (rules §16), as
// register.py's parser gives it.
type Spec struct {
	// Metric is metric_key.
	Metric string `json:"metric"`
	// Steps is the validated steps literal: "last", "all", or step indices.
	Steps Steps `json:"steps"`
	// Constraint is the band, its omitted params filled with 0.
	Constraint Constraint `json:"constraint"`
	// StepsKey and ConstraintKey are canonical JSON of the literals as
	// written (or as GATE_DEFAULTS gives them): the baseline's coordinate.
	StepsKey      string `json:"steps_key"`
	ConstraintKey string `json:"constraint_key"`
	// Enforce and AllowlistReason are policy metadata the gate carries
	// without acting on.
	Enforce         bool    `json:"enforce"`
	AllowlistReason *string `json:"allowlist_reason"`
	// Line is the line of the call.
	Line int `json:"line"`
}

// Steps is a steps literal: Mode "last" or "all", or "list" with List.
type Steps struct {
	Mode string     `json:"mode"`
	List []*big.Int `json:"list,omitempty"`
}

// repr is Python's repr() of the validated literal, as Miles' messages
// show it.
func (s Steps) repr() string {
	if s.Mode != "list" {
		return pysource.Repr(s.Mode)
	}
	parts := make([]string, len(s.List))
	for k, n := range s.List {
		parts[k] = n.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Constraint is the two-sided band of constraints.py: the current value
// passes within [ref - max(RelDown*|ref|, AbsFloorDown), ref +
// max(RelUp*|ref|, AbsFloorUp)].
type Constraint struct {
	RelUp        float64 `json:"rel_up"`
	AbsFloorUp   float64 `json:"abs_floor_up"`
	RelDown      float64 `json:"rel_down"`
	AbsFloorDown float64 `json:"abs_floor_down"`
}

func (c *Constraint) set(param string, v float64) {
	switch param {
	case "rel_up":
		c.RelUp = v
	case "abs_floor_up":
		c.AbsFloorUp = v
	case "rel_down":
		c.RelDown = v
	case "abs_floor_down":
		c.AbsFloorDown = v
	}
}

// ErrDeclaration is a test file whose declarations Miles' parser refuses:
// evaluate_gate raises, so the file gets no verdict.
var ErrDeclaration = errors.New("the gate declarations cannot be read")

// registerName is the marker a test file calls.
const registerName = "register_ci_gate"

// fields are register_ci_gate's arguments in register.py's _FIELDS order.
var fields = []string{"metric_key", "steps", "constraint", "enforce", "allowlist_reason"}

// ParseDeclarations reads every register_ci_gate call at the top level of
// a test file (file is the repo-relative path Miles names it by) as
// register.py's parse_ci_gate_specs does, with the checkout's GATE_DEFAULTS.
// An error wraps ErrDeclaration and carries Miles' message.
func ParseDeclarations(file string, src []byte, f Form) ([]Spec, error) {
	text := pysource.Normalize(string(src))
	calls, err := pysource.TopLevelCalls(text, func(name string) bool { return name == registerName })
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not parse: %w", ErrDeclaration, file, err)
	}
	var specs []Spec
	for _, c := range calls {
		s, err := parseCall(file, text, c, f)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrDeclaration, err)
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// parseCall is register.py's _parse_ci_gate_call.
func parseCall(file, text string, c pysource.Call, f Form) (Spec, error) {
	prefix := file + ": " + registerName + "()"
	positional := 0
	for _, a := range c.Args {
		if a.Kind == pysource.Positional || a.Kind == pysource.Starred {
			positional++
		}
	}
	if positional > 0 {
		return Spec{}, fmt.Errorf("%s takes only keyword arguments (got %d positional)", prefix, positional)
	}
	raw := map[string]pyLit{}
	for _, a := range c.Args {
		if a.Kind == pysource.DoubleStar {
			return Spec{}, fmt.Errorf("%s: **kwargs are not supported", prefix)
		}
		if !slices.Contains(fields, a.Keyword) {
			sorted := slices.Clone(fields)
			slices.Sort(sorted)
			return Spec{}, fmt.Errorf("%s: unknown argument %s; valid: %s", prefix, pysource.Repr(a.Keyword), pysource.ReprList(sorted))
		}
		if _, dup := raw[a.Keyword]; dup {
			return Spec{}, fmt.Errorf("%s: line %d: keyword argument repeated: %s (Python does not parse it)", file, a.Line, a.Keyword)
		}
		v, err := argLiteral(text, a)
		if err != nil {
			var lit *errLiteral
			if errors.As(err, &lit) {
				return Spec{}, fmt.Errorf("%s: %s %s", prefix, a.Keyword, lit.msg)
			}
			return Spec{}, fmt.Errorf("%s: line %d: %s does not parse", file, a.Line, a.Keyword)
		}
		raw[a.Keyword] = v
	}
	metric, hasMetric := raw["metric_key"]
	if hasMetric && metric.kind == litStr {
		if entry, ok := f.defaults.get(metric.s); ok {
			for _, field := range []string{"steps", "constraint"} {
				if _, written := raw[field]; written {
					continue
				}
				v, ok := entry.get(field)
				if !ok {
					return Spec{}, fmt.Errorf("%s: GATE_DEFAULTS[%s] has no %s (Python raises KeyError)", prefix, pysource.Repr(metric.s), pysource.Repr(field))
				}
				raw[field] = v
			}
		}
	}
	for _, field := range fields {
		if _, ok := raw[field]; ok {
			continue
		}
		switch field {
		case "metric_key":
			return Spec{}, fmt.Errorf("%s: metric_key is required", prefix)
		case "steps", "constraint":
			return Spec{}, fmt.Errorf("%s: %s is required (metric_key %s has no GATE_DEFAULTS entry)", prefix, field, metric.repr())
		case "enforce":
			raw[field] = pyLit{kind: litBool}
		default:
			raw[field] = pyLit{kind: litNone}
		}
	}
	s := Spec{Line: c.Line}
	if metric.kind != litStr {
		return Spec{}, fmt.Errorf("%s: metric_key must be a string", prefix)
	}
	s.Metric = metric.s
	var err error
	if s.Steps, err = validateSteps(raw["steps"]); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", prefix, err)
	}
	if s.Constraint, err = normalizeConstraint(raw["constraint"]); err != nil {
		if errors.Is(err, errOverflow) {
			return Spec{}, fmt.Errorf("%s: %w", file, err)
		}
		return Spec{}, fmt.Errorf("%s: %w", prefix, err)
	}
	if s.StepsKey, err = canonicalKey(raw["steps"]); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", prefix, err)
	}
	if s.ConstraintKey, err = canonicalKey(raw["constraint"]); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", prefix, err)
	}
	enforce := raw["enforce"]
	if enforce.kind != litBool {
		return Spec{}, fmt.Errorf("%s: enforce must be a boolean", prefix)
	}
	s.Enforce = enforce.b
	switch reason := raw["allowlist_reason"]; reason.kind {
	case litNone:
	case litStr:
		s.AllowlistReason = &reason.s
	default:
		return Spec{}, fmt.Errorf("%s: allowlist_reason must be a string or None", prefix)
	}
	return s, nil
}

// argLiteral reads a keyword argument's value as _literal does.
func argLiteral(text string, a pysource.Arg) (pyLit, error) {
	if a.Start < 0 || a.End > len(text) || a.Start >= a.End {
		return pyLit{}, errSyntax
	}
	var toks []pysource.Token
	// The value alone, in parentheses: one logical line however it was
	// written across lines.
	err := pysource.Scan("("+text[a.Start:a.End]+")\n", func(line []pysource.Token) error {
		for _, t := range line {
			if t.Kind != pysource.Newline && t.Kind != pysource.EOF && t.Kind != pysource.Indent && t.Kind != pysource.Dedent {
				toks = append(toks, t)
			}
		}
		return nil
	})
	if err != nil || len(toks) < 2 {
		return pyLit{}, errSyntax
	}
	return readLiteral(toks[1:len(toks)-1], false)
}

// validateSteps is register.py's _validate_steps.
func validateSteps(v pyLit) (Steps, error) {
	if v.kind == litStr && (v.s == "last" || v.s == "all") {
		return Steps{Mode: v.s}, nil
	}
	if v.kind != litList {
		return Steps{}, errors.New(`steps must be "last", "all", or a non-empty list of step indices`)
	}
	if len(v.elems) == 0 {
		return Steps{}, errors.New("steps: must be a non-empty list of step indices")
	}
	s := Steps{Mode: "list"}
	for _, e := range v.elems {
		if e.kind != litInt {
			return Steps{}, errors.New("steps: step indices must be integers")
		}
		if e.i.Sign() < 0 {
			return Steps{}, errors.New("steps: step indices must be >= 0")
		}
		if slices.ContainsFunc(s.List, func(n *big.Int) bool { return n.Cmp(e.i) == 0 }) {
			return Steps{}, fmt.Errorf("steps: duplicate step %s", e.i)
		}
		s.List = append(s.List, e.i)
	}
	return s, nil
}

// errOverflow is math.isfinite of an int too large for a float, which
// raises OverflowError (not the parser's own error).
var errOverflow = errors.New("OverflowError: int too large to convert to float")

// normalizeConstraint is register.py's _normalize_constraint over the
// schema miles-ci knows (constraintSchema).
func normalizeConstraint(v pyLit) (Constraint, error) {
	if v.kind != litDict {
		return Constraint{}, errors.New("constraint must be a dict")
	}
	for _, k := range v.keys {
		if !slices.Contains(constraintSchema, k) {
			sorted := slices.Clone(constraintSchema)
			slices.Sort(sorted)
			return Constraint{}, fmt.Errorf("unknown key %s for constraint; valid: %s", pysource.Repr(k), pysource.ReprList(sorted))
		}
	}
	if !slices.Contains(v.keys, "rel_up") && !slices.Contains(v.keys, "abs_floor_up") {
		return Constraint{}, errors.New("constraint requires at least one upper band param ('rel_up' or 'abs_floor_up')")
	}
	if !slices.Contains(v.keys, "rel_down") && !slices.Contains(v.keys, "abs_floor_down") {
		return Constraint{}, errors.New("constraint requires at least one lower band param ('rel_down' or 'abs_floor_down')")
	}
	var c Constraint
	for _, param := range constraintSchema {
		p, ok := v.get(param)
		if !ok {
			continue
		}
		if !p.isNumber() {
			return Constraint{}, fmt.Errorf("constraint param %s: must be a number", pysource.Repr(param))
		}
		f, ok := p.float()
		if !ok {
			return Constraint{}, errOverflow
		}
		if math.IsInf(f, 0) || math.IsNaN(f) || f < 0 {
			return Constraint{}, fmt.Errorf("constraint param %s: must be a finite number >= 0", pysource.Repr(param))
		}
		c.set(param, f)
	}
	return c, nil
}
