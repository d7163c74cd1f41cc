package pysource

import (
	"reflect"
	"testing"
)

func TestAssignments(t *testing.T) {
	src := `"""doc"""
A = B = "x"
C: dict[str, tuple[str, ...]] = {"k": (A, ())}
D, E = 1, 2
F.G = 3
H += [1]
I = 1, "two", None, True
J = frozenset({"a", 'b',})
K = [i for i in range(3)]
if True:
    L = "inside a block"
def f():
    M = "inside a function"
N = HWBackend.CUDA
O = -1
`
	got, err := Assignments(src)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name      string
		line      int
		kind      ValueKind
		augmented bool
		bad       bool
	}
	var rows []row
	for _, a := range got {
		rows = append(rows, row{a.Name, a.Line, a.Value.Kind, a.Augmented, a.ValueErr != nil})
	}
	want := []row{
		{"A", 2, StrValue, false, false}, {"B", 2, StrValue, false, false},
		{"C", 3, DictValue, false, false},
		{"H", 6, 0, true, false},
		{"I", 7, TupleValue, false, false},
		{"J", 8, CallValue, false, false},
		{"K", 9, 0, false, true},
		{"N", 14, NameValue, false, false},
		{"O", 15, 0, false, true},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("wanted %v, got %v", want, rows)
	}
	c := got[2].Value
	if c.Keys[0].Str != "k" || c.Elems[0].Kind != TupleValue || c.Elems[0].Elems[0].Name != "A" || len(c.Elems[0].Elems[1].Elems) != 0 {
		t.Errorf("C: got %+v", c)
	}
	if j := got[5].Value; j.Name != "frozenset" || len(j.Elems) != 1 || j.Elems[0].Kind != SetValue || len(j.Elems[0].Elems) != 2 {
		t.Errorf("J: got %+v", j)
	}
	if _, err := Assignments("A = (\n"); err == nil {
		t.Error("wanted a syntax error")
	}
}

func TestFromImports(t *testing.T) {
	src := `"""Doc."""
import os
from tests.ci.ci_register import HWBackend
from tests.ci.hardware import (
    STAGES,
    ARCHES as KNOWN,  # a comment
)
from . import sibling; from x import *
if True:
    from tests.ci.other import HIDDEN
`
	_, got, err := Bindings(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []FromImport{
		{Module: "tests.ci.ci_register", Name: "HWBackend", Alias: "HWBackend", Line: 3},
		{Module: "tests.ci.hardware", Name: "STAGES", Alias: "STAGES", Line: 4},
		{Module: "tests.ci.hardware", Name: "ARCHES", Alias: "KNOWN", Line: 4},
		{Module: ".", Name: "sibling", Alias: "sibling", Line: 8},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wanted %+v, got %+v", want, got)
	}
}
