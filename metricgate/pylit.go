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

// litKind is the Python type of a literal in a test file or a table.
type litKind uint8

const (
	litNone litKind = iota
	litBool
	litInt
	litFloat
	litComplex
	litStr
	litBytes
	litEllipsis
	litList
	litTuple
	litDict
)

// pyLit is a literal as register.py's _literal builds it from the ast:
// ints exact, floats as Python reads them, dicts with string keys in
// source order.
type pyLit struct {
	kind litKind
	b    bool
	i    *big.Int
	f    float64
	s    string
	// elems are a list's or tuple's elements, or a dict's values.
	elems []pyLit
	// keys are a dict's keys, in source order.
	keys []string
}

func (l pyLit) get(key string) (pyLit, bool) {
	if l.kind != litDict {
		return pyLit{}, false
	}
	if k := slices.Index(l.keys, key); k >= 0 {
		return l.elems[k], true
	}
	return pyLit{}, false
}

// isNumber is isinstance(x, (int, float)) and not isinstance(x, bool).
func (l pyLit) isNumber() bool { return l.kind == litInt || l.kind == litFloat }

// float is float(x) of a number; ok is false for an int too large for a
// float (Python raises OverflowError).
func (l pyLit) float() (float64, bool) {
	if l.kind == litFloat {
		return l.f, true
	}
	f, _ := new(big.Float).SetInt(l.i).Float64()
	return f, !math.IsInf(f, 0)
}

// errLiteral is a value _literal refuses (register.py's _ParseError); its
// text is Miles' message.
type errLiteral struct{ msg string }

func (e *errLiteral) Error() string { return e.msg }

// errSyntax is source Python's parser refuses: the whole file fails.
var errSyntax = errors.New("invalid syntax")

func notLiteral(node string) error {
	return &errLiteral{"must be a literal (got " + node + ")"}
}

// readLiteral reads an argument's tokens as register.py's _literal does: a
// constant, a negative int or float, a list or a dict (string keys, none
// repeated) of the same. tables also reads tuples, for the checkout's
// tables (CONSTRAINT_SCHEMA).
func readLiteral(toks []pysource.Token, tables bool) (pyLit, error) {
	toks = pysource.StripParens(toks)
	if len(toks) == 0 {
		return pyLit{}, errSyntax
	}
	switch node := nodeOf(toks); node {
	case "Constant":
		return constant(toks)
	case "UnaryOp":
		if toks[0].Kind == pysource.Op && toks[0].Text == "-" {
			rest := pysource.StripParens(toks[1:])
			if len(rest) > 0 && nodeOf(rest) == "Constant" {
				c, err := constant(rest)
				if err != nil {
					return pyLit{}, err
				}
				switch c.kind {
				case litInt:
					return pyLit{kind: litInt, i: new(big.Int).Neg(c.i)}, nil
				case litFloat:
					return pyLit{kind: litFloat, f: -c.f}, nil
				}
			}
		}
		return pyLit{}, notLiteral(node)
	case "List":
		elems, err := sequence(toks[1:len(toks)-1], tables)
		return pyLit{kind: litList, elems: elems}, err
	case "Tuple":
		if !tables {
			return pyLit{}, notLiteral(node)
		}
		elems, err := sequence(toks[1:len(toks)-1], tables)
		return pyLit{kind: litTuple, elems: elems}, err
	case "Dict":
		return dictLiteral(toks[1:len(toks)-1], tables)
	case "Invalid":
		return pyLit{}, errSyntax
	default:
		return pyLit{}, notLiteral(node)
	}
}

// nodeOf is pysource.NodeOf, with a dict comprehension named as Python's
// ast names it.
func nodeOf(toks []pysource.Token) string {
	node := pysource.NodeOf(toks)
	switch node {
	case "SetComp":
		if len(pysource.SplitTop(toks[1:len(toks)-1], ":")) > 1 {
			return "DictComp"
		}
	case "Set":
		for _, piece := range pysource.SplitTop(toks[1:len(toks)-1], ",") {
			if len(piece) > 0 && piece[0].Kind == pysource.Op && piece[0].Text == "**" {
				return "Dict" // {**a} is a dict display
			}
		}
	}
	return node
}

// sequence reads comma-separated elements (a trailing comma allowed).
func sequence(inner []pysource.Token, tables bool) ([]pyLit, error) {
	out := []pyLit{}
	if len(inner) == 0 {
		return out, nil
	}
	for _, piece := range pysource.SplitTop(inner, ",") {
		if len(piece) == 0 {
			return nil, errSyntax
		}
		if piece[0].Kind == pysource.Op && piece[0].Text == "*" {
			return nil, notLiteral("Starred")
		}
		el, err := readLiteral(piece, tables)
		if err != nil {
			return nil, err
		}
		out = append(out, el)
	}
	return out, nil
}

// dictLiteral reads `key: value` pairs in order, as _literal checks them.
func dictLiteral(inner []pysource.Token, tables bool) (pyLit, error) {
	d := pyLit{kind: litDict}
	if len(inner) == 0 {
		return d, nil
	}
	for _, piece := range pysource.SplitTop(inner, ",") {
		if len(piece) == 0 {
			return pyLit{}, errSyntax
		}
		if piece[0].Kind == pysource.Op && piece[0].Text == "**" {
			return pyLit{}, &errLiteral{"dict unpacking (**) is not allowed"}
		}
		colon := topColon(piece)
		if colon <= 0 || colon == len(piece)-1 {
			return pyLit{}, errSyntax
		}
		key, err := readLiteral(piece[:colon], tables)
		if err != nil {
			return pyLit{}, err
		}
		if key.kind != litStr {
			return pyLit{}, &errLiteral{"dict keys must be string literals"}
		}
		if slices.Contains(d.keys, key.s) {
			return pyLit{}, &errLiteral{"duplicate key " + pysource.Repr(key.s)}
		}
		val, err := readLiteral(piece[colon+1:], tables)
		if err != nil {
			return pyLit{}, err
		}
		d.keys = append(d.keys, key.s)
		d.elems = append(d.elems, val)
	}
	return d, nil
}

// topColon is the index of the first ':' where no bracket is open, or -1.
func topColon(toks []pysource.Token) int {
	depth := 0
	for k, t := range toks {
		if t.Kind != pysource.Op {
			continue
		}
		switch t.Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ":":
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// constant reads an ast.Constant: a number, adjacent string literals,
// True, False, None or Ellipsis.
func constant(toks []pysource.Token) (pyLit, error) {
	first := toks[0]
	if len(toks) == 1 {
		switch first.Kind {
		case pysource.Number:
			n, err := pysource.ParseNumber(first.Text)
			if err != nil {
				return pyLit{}, errSyntax
			}
			switch n.Kind {
			case pysource.Int:
				i, ok := new(big.Int).SetString(strings.ReplaceAll(strings.ToLower(first.Text), "_", ""), 0)
				if !ok {
					return pyLit{}, errSyntax
				}
				return pyLit{kind: litInt, i: i}, nil
			case pysource.Float:
				return pyLit{kind: litFloat, f: n.Value}, nil
			}
			return pyLit{kind: litComplex}, nil
		case pysource.Name:
			switch first.Text {
			case "True", "False":
				return pyLit{kind: litBool, b: first.Text == "True"}, nil
			case "None":
				return pyLit{kind: litNone}, nil
			}
		case pysource.Op:
			if first.Text == "..." {
				return pyLit{kind: litEllipsis}, nil
			}
		}
	}
	var b strings.Builder
	bytes := false
	for k, t := range toks {
		if t.Kind != pysource.String {
			return pyLit{}, errSyntax
		}
		s, err := pysource.DecodeString(t.Text)
		if err != nil || s.FString || k > 0 && s.Bytes != bytes {
			return pyLit{}, errSyntax // mixing bytes and str does not parse
		}
		bytes = s.Bytes
		b.WriteString(s.Value)
	}
	if bytes {
		return pyLit{kind: litBytes, s: b.String()}, nil
	}
	return pyLit{kind: litStr, s: b.String()}, nil
}

// canonicalKey is register.py's _canonical_key: json.dumps(raw,
// sort_keys=True, separators=(",", ":")) with the module's defaults
// (ensure_ascii, NaN and Infinity written bare).
func canonicalKey(l pyLit) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, l); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSON(b *strings.Builder, l pyLit) error {
	switch l.kind {
	case litNone:
		b.WriteString("null")
	case litBool:
		b.WriteString(map[bool]string{true: "true", false: "false"}[l.b])
	case litInt:
		b.WriteString(l.i.String())
	case litFloat:
		b.WriteString(pysource.JSONFloat(l.f))
	case litStr:
		b.WriteString(pysource.JSONString(l.s))
	case litList, litTuple:
		b.WriteByte('[')
		for k, e := range l.elems {
			if k > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case litDict:
		order := make([]int, len(l.keys))
		for k := range order {
			order[k] = k
		}
		slices.SortFunc(order, func(x, y int) int { return strings.Compare(l.keys[x], l.keys[y]) })
		b.WriteByte('{')
		for n, k := range order {
			if n > 0 {
				b.WriteByte(',')
			}
			b.WriteString(pysource.JSONString(l.keys[k]))
			b.WriteByte(':')
			if err := writeJSON(b, l.elems[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("a %s is not JSON serializable", l.typeName())
	}
	return nil
}

func (l pyLit) typeName() string {
	return [...]string{"NoneType", "bool", "int", "float", "complex", "str", "bytes", "ellipsis", "list", "tuple", "dict"}[l.kind]
}

// repr is Python's repr() of a literal, for messages.
func (l pyLit) repr() string {
	switch l.kind {
	case litNone:
		return "None"
	case litBool:
		return map[bool]string{true: "True", false: "False"}[l.b]
	case litInt:
		return l.i.String()
	case litFloat:
		return pysource.FloatRepr(l.f)
	case litStr:
		return pysource.Repr(l.s)
	case litEllipsis:
		return "Ellipsis"
	case litList, litTuple:
		parts := make([]string, len(l.elems))
		for k, e := range l.elems {
			parts[k] = e.repr()
		}
		if l.kind == litTuple {
			if len(parts) == 1 {
				return "(" + parts[0] + ",)"
			}
			return "(" + strings.Join(parts, ", ") + ")"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case litDict:
		parts := make([]string, len(l.keys))
		for k, key := range l.keys {
			parts[k] = pysource.Repr(key) + ": " + l.elems[k].repr()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "<" + l.typeName() + ">"
}
