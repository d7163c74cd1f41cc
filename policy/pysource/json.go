package pysource

import (
	"math"
	"strings"

	"github.com/radixark/miles-ci/pyjson"
)

// Python's json.dumps renderings (default separators, ensure_ascii), for
// the outputs Miles' scripts write with it.

// JSONString is s as Python's json.dumps writes a string (ensure_ascii),
// a lone surrogate (WTF-8, as a "\ud800" escape leaves it) included.
func JSONString(s string) string { return pyjson.Quote(s) }

// JSONList is json.dumps of a list of strings: ["b200", "8gpu"].
func JSONList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = JSONString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// JSONFloat is json.dumps of a float: its repr, Infinity and NaN as
// Python writes them.
func JSONFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	return FloatRepr(f)
}
