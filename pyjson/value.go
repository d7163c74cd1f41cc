// Package pyjson reads and writes JSON as CPython 3.11's json module does,
// for code that must answer exactly as a Python script that uses it: the
// values keep Python's types (an int is not a float, a str may hold a lone
// surrogate), the decoder refuses what json.loads refuses with its message
// and position, and the encoder writes json.dumps' bytes (ensure_ascii).
//
// Strings are WTF-8: UTF-8, except that a lone surrogate (which a \ud800
// escape gives) is kept as its three-byte form, so every Python str has
// exactly one Go string and comparing two compares their code points.
package pyjson

import (
	"math"
	"math/big"
)

// Kind is a value's Python type.
type Kind uint8

// The kinds json.loads gives.
const (
	Null Kind = iota
	Bool
	Int
	Float
	Str
	List
	Dict
)

// Value is one decoded JSON value with its Python type.
type Value struct {
	Kind  Kind
	Bool  bool
	Int   *big.Int
	Float float64
	// Str is a Str's text, WTF-8.
	Str  string
	List []Value
	Dict *Object
}

// Object is a dict in insertion order.
type Object struct {
	Keys  []string
	Vals  []Value
	index map[string]int
}

// Get is dict.get: the value of key and whether it is there.
func (o *Object) Get(key string) (Value, bool) {
	if o == nil {
		return Value{}, false
	}
	i, ok := o.index[key]
	if !ok {
		return Value{}, false
	}
	return o.Vals[i], true
}

// Len is len(dict).
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.Keys)
}

// set is d[key] = v: a new key goes last, a known one keeps its place.
func (o *Object) set(key string, v Value) {
	if o.index == nil {
		o.index = map[string]int{}
	}
	if i, ok := o.index[key]; ok {
		o.Vals[i] = v
		return
	}
	o.index[key] = len(o.Keys)
	o.Keys = append(o.Keys, key)
	o.Vals = append(o.Vals, v)
}

// NewObject is a dict of the given pairs, keys in order (a later equal key
// replaces the value, as in Python).
func NewObject(pairs ...any) *Object {
	o := &Object{}
	for i := 0; i+1 < len(pairs); i += 2 {
		o.set(pairs[i].(string), pairs[i+1].(Value))
	}
	return o
}

// Constructors of values.
func NoneValue() Value              { return Value{Kind: Null} }
func BoolValue(b bool) Value        { return Value{Kind: Bool, Bool: b} }
func IntValue(i int64) Value        { return Value{Kind: Int, Int: big.NewInt(i)} }
func BigValue(i *big.Int) Value     { return Value{Kind: Int, Int: i} }
func StrValue(s string) Value       { return Value{Kind: Str, Str: s} }
func ListValue(l ...Value) Value    { return Value{Kind: List, List: l} }
func DictValue(o *Object) Value     { return Value{Kind: Dict, Dict: o} }
func FloatValue(f float64) Value    { return Value{Kind: Float, Float: f} }
func (v Value) IsStr(s string) bool { return v.Kind == Str && v.Str == s }

// PositiveInt is the script's `type(v) is int and v > 0`.
func (v Value) PositiveInt() bool { return v.Kind == Int && v.Int.Sign() > 0 }

// EqualInt is Python's v == i for an int i: an int of that value, a float
// exactly equal to it, or a bool (True == 1, False == 0).
func (v Value) EqualInt(i *big.Int) bool {
	switch v.Kind {
	case Int:
		return v.Int.Cmp(i) == 0
	case Bool:
		b := int64(0)
		if v.Bool {
			b = 1
		}
		return i.IsInt64() && i.Int64() == b
	case Float:
		if math.IsInf(v.Float, 0) || math.IsNaN(v.Float) || v.Float != math.Trunc(v.Float) {
			return false
		}
		f := new(big.Rat).SetFloat64(v.Float)
		return f.Cmp(new(big.Rat).SetInt(i)) == 0
	}
	return false
}

// Hashable says whether Python can put v in a set (a list or dict cannot).
func (v Value) Hashable() bool { return v.Kind != List && v.Kind != Dict }
