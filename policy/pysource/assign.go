package pysource

import (
	"fmt"
	"strings"
)

// ValueKind is the kind of a literal Value.
type ValueKind int

// Value kinds: the literal forms a table of constants is written in.
const (
	StrValue   ValueKind = iota // a string literal (adjacent literals joined)
	NumValue                    // an int or float literal
	BoolValue                   // True or False
	NoneValue                   // None
	ListValue                   // [a, b]
	TupleValue                  // (a, b) or a, b
	SetValue                    // {a, b}
	DictValue                   // {k: v}; Keys and Elems pair up
	NameValue                   // a bare or dotted name, e.g. NIGHTLY_CADENCE or HWBackend.CUDA
	CallValue                   // a call of a bare name with positional literal arguments, e.g. frozenset({...})
)

// String names the kind the way Python's ast would.
func (k ValueKind) String() string {
	return [...]string{"a string", "a number", "a bool", "None", "a list", "a tuple", "a set", "a dict", "a name", "a call"}[k]
}

// Value is one literal of a module-level table: constants, containers of
// literals, names (which the caller may resolve) and calls such as
// frozenset({...}), but no operators or comprehensions.
type Value struct {
	Kind ValueKind
	// Str is the text of a StrValue.
	Str string
	// Num is the value of a NumValue; Bool of a BoolValue.
	Num  float64
	Bool bool
	// Name is the dotted name of a NameValue, or the callee of a CallValue.
	Name string
	// Elems are the elements of a list, tuple or set, the values of a dict,
	// or the arguments of a call.
	Elems []Value
	// Keys are the keys of a dict, in source order.
	Keys []Value
	// Line is the 1-based line where the value starts.
	Line int
}

// Assignment is a module-level `NAME = value` or `NAME: annotation = value`.
type Assignment struct {
	Name string
	// Line is the 1-based line of the target name.
	Line int
	// Value is the assigned literal; ValueErr says why it is not one.
	Value    Value
	ValueErr error
	// Augmented marks `NAME op= value`, which changes rather than sets the name.
	Augmented bool
}

// Assignments returns the module's top-level assignments to a bare name, in
// source order; a chained `A = B = v` gives one per target. Values that are
// not literals carry ValueErr instead of failing the whole module, so that a
// caller can ignore assignments it does not need. Source Python would not
// parse is a *SyntaxError.
func Assignments(src string) ([]Assignment, error) {
	out, _, err := Bindings(src)
	return out, err
}

// FromImport is a module-level `from MODULE import NAME [as ALIAS]`.
type FromImport struct {
	// Module is the dotted module, leading dots of a relative import kept.
	Module string
	// Name is the imported name; Alias the name it is bound to (Name when
	// there is no `as`).
	Name, Alias string
	// Line is the 1-based line of the statement.
	Line int
}

// Bindings returns the module's top-level assignments (as Assignments does)
// and its top-level `from ... import` statements, in source order, reading
// the source once. `from M import *` binds nothing it can name.
func Bindings(src string) ([]Assignment, []FromImport, error) {
	var assigns []Assignment
	var imports []FromImport
	err := topLevelStatements(src, func(stmt []Token) error {
		assigns = append(assigns, assignmentsOf(stmt)...)
		imports = append(imports, fromImportsOf(stmt)...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return assigns, imports, nil
}

func fromImportsOf(stmt []Token) []FromImport {
	if len(stmt) < 4 || stmt[0].Kind != Name || stmt[0].Text != "from" {
		return nil
	}
	i := 1
	var module strings.Builder
	for ; i < len(stmt) && (stmt[i].Kind != Name || stmt[i].Text != "import"); i++ {
		module.WriteString(stmt[i].Text)
	}
	names := stmt[min(i+1, len(stmt)):]
	if n := len(names); n >= 2 && names[0].Kind == Op && names[0].Text == "(" && matching(names, 0) == n-1 {
		names = names[1 : n-1]
	}
	var out []FromImport
	for _, part := range splitTop(names, ",") {
		switch {
		case len(part) == 1 && part[0].Kind == Name:
			out = append(out, FromImport{Module: module.String(), Name: part[0].Text, Alias: part[0].Text, Line: stmt[0].Line})
		case len(part) == 3 && part[0].Kind == Name && part[1].Text == "as" && part[2].Kind == Name:
			out = append(out, FromImport{Module: module.String(), Name: part[0].Text, Alias: part[2].Text, Line: stmt[0].Line})
		}
	}
	return out
}

// augmentedOps are the operators of an augmented assignment.
var augmentedOps = map[string]bool{"+=": true, "-=": true, "*=": true, "/=": true, "//=": true, "%=": true,
	"**=": true, ">>=": true, "<<=": true, "&=": true, "^=": true, "|=": true, "@=": true}

func assignmentsOf(stmt []Token) []Assignment {
	if len(stmt) < 2 || stmt[0].Kind != Name {
		return nil
	}
	if stmt[1].Kind == Op && augmentedOps[stmt[1].Text] {
		return []Assignment{{Name: stmt[0].Ident(), Line: stmt[0].Line, Augmented: true}}
	}
	parts := splitTop(stmt, "=")
	if len(parts) < 2 {
		return nil
	}
	value := parts[len(parts)-1]
	var out []Assignment
	for i, target := range parts[:len(parts)-1] {
		// An annotation is allowed on a single target only: NAME: TYPE = value.
		if i == 0 && len(parts) == 2 && len(target) > 2 && target[1].Kind == Op && target[1].Text == ":" {
			target = target[:1]
		}
		if len(target) != 1 || target[0].Kind != Name {
			continue // a, b = ...; x.y = ...; x[k] = ...: not a table of this module
		}
		a := Assignment{Name: target[0].Ident(), Line: target[0].Line}
		a.Value, a.ValueErr = ParseValue(value)
		out = append(out, a)
	}
	return out
}

// ParseValue reads a literal from the tokens of an expression.
func ParseValue(toks []Token) (Value, error) {
	if len(toks) == 0 {
		return Value{}, fmt.Errorf("an assignment needs a value")
	}
	// A comma outside brackets makes a tuple without parentheses.
	if hasTopComma(toks) {
		return sequence(TupleValue, toks, toks[0].Line)
	}
	return parseOne(toks)
}

// parseOne reads one element: no top-level comma.
func parseOne(toks []Token) (Value, error) {
	first := toks[0]
	line := first.Line
	if allStrings(toks) {
		e := classifyStrings(toks, nil)
		if e.Node != "Constant" {
			return Value{}, fmt.Errorf("line %d: %s is not a plain string literal", line, tokenText(toks))
		}
		if e.Const.Type == "bytes" {
			return Value{}, fmt.Errorf("line %d: %s is bytes, not a string", line, tokenText(toks))
		}
		return Value{Kind: StrValue, Str: e.Const.Str, Line: line}, nil
	}
	if len(toks) == 1 {
		switch first.Kind {
		case Number:
			n, err := ParseNumber(first.Text)
			if err != nil || n.Kind == Complex {
				return Value{}, fmt.Errorf("line %d: %s is not a number literal", line, first.Text)
			}
			return Value{Kind: NumValue, Num: n.Value, Line: line}, nil
		case Name:
			switch first.Text {
			case "True", "False":
				return Value{Kind: BoolValue, Bool: first.Text == "True", Line: line}, nil
			case "None":
				return Value{Kind: NoneValue, Line: line}, nil
			}
			return Value{Kind: NameValue, Name: first.Ident(), Line: line}, nil
		}
	}
	if name, ok := dottedName(toks); ok {
		return Value{Kind: NameValue, Name: name, Line: line}, nil
	}
	if first.Kind == Op && matching(toks, 0) == len(toks)-1 {
		inner := toks[1 : len(toks)-1]
		if containsTopName(inner, "for") {
			return Value{}, fmt.Errorf("line %d: a comprehension is not a literal", line)
		}
		switch first.Text {
		case "[":
			return sequence(ListValue, inner, line)
		case "(":
			if len(inner) == 0 || hasTopComma(inner) {
				return sequence(TupleValue, inner, line)
			}
			return parseOne(inner) // (x) is x
		case "{":
			if len(inner) == 0 || containsTopOp(inner, ":") {
				return dict(inner, line)
			}
			return sequence(SetValue, inner, line)
		}
	}
	// A call of a bare name with literal arguments, e.g. frozenset({"a", "b"}).
	if len(toks) >= 3 && first.Kind == Name && toks[1].Kind == Op && toks[1].Text == "(" && matching(toks, 1) == len(toks)-1 {
		args, err := sequence(CallValue, toks[2:len(toks)-1], line)
		if err != nil {
			return Value{}, err
		}
		for _, a := range toks[2 : len(toks)-1] {
			if a.Kind == Op && (a.Text == "=" || a.Text == "*" || a.Text == "**") {
				return Value{}, fmt.Errorf("line %d: %s() takes keyword or starred arguments here; write its elements as a literal", line, first.Text)
			}
		}
		args.Name = first.Text
		return args, nil
	}
	return Value{}, fmt.Errorf("line %d: %s is not a literal (an expression Python computes at import time)", line, abbreviate(tokenText(toks)))
}

// sequence reads comma-separated elements (a trailing comma allowed).
func sequence(kind ValueKind, toks []Token, line int) (Value, error) {
	v := Value{Kind: kind, Line: line}
	if len(toks) == 0 {
		return v, nil
	}
	for _, piece := range splitTop(toks, ",") {
		if len(piece) == 0 {
			return Value{}, fmt.Errorf("line %d: an empty element", line)
		}
		if piece[0].Kind == Op && (piece[0].Text == "*" || piece[0].Text == "**") {
			return Value{}, fmt.Errorf("line %d: an unpacked element (%s...) is not a literal", piece[0].Line, piece[0].Text)
		}
		el, err := parseOne(piece)
		if err != nil {
			return Value{}, err
		}
		v.Elems = append(v.Elems, el)
	}
	return v, nil
}

// dict reads `k: v` pairs (a trailing comma allowed).
func dict(toks []Token, line int) (Value, error) {
	v := Value{Kind: DictValue, Line: line}
	if len(toks) == 0 {
		return v, nil
	}
	for _, piece := range splitTop(toks, ",") {
		if len(piece) == 0 {
			return Value{}, fmt.Errorf("line %d: an empty dict entry", line)
		}
		if piece[0].Kind == Op && piece[0].Text == "**" {
			return Value{}, fmt.Errorf("line %d: an unpacked dict (**...) is not a literal", piece[0].Line)
		}
		kv := splitTop(piece, ":")
		if len(kv) != 2 || len(kv[0]) == 0 || len(kv[1]) == 0 {
			return Value{}, fmt.Errorf("line %d: a dict entry must be KEY: VALUE", piece[0].Line)
		}
		k, err := parseOne(kv[0])
		if err != nil {
			return Value{}, err
		}
		val, err := ParseValue(kv[1])
		if err != nil {
			return Value{}, err
		}
		v.Keys = append(v.Keys, k)
		v.Elems = append(v.Elems, val)
	}
	return v, nil
}

// dottedName reads NAME(.NAME)*.
func dottedName(toks []Token) (string, bool) {
	if len(toks)%2 == 0 {
		return "", false
	}
	var b strings.Builder
	for i, t := range toks {
		if i%2 == 0 {
			if t.Kind != Name {
				return "", false
			}
			b.WriteString(t.Text)
		} else {
			if t.Kind != Op || t.Text != "." {
				return "", false
			}
			b.WriteByte('.')
		}
	}
	return b.String(), true
}

// tokenText renders tokens for an error message.
func tokenText(toks []Token) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = t.Text
	}
	return strings.Join(parts, " ")
}

func abbreviate(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
