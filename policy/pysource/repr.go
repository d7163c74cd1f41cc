package pysource

import (
	"math"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/pyjson"
)

// Repr renders a string the way Python's repr() does, so messages read like Miles' own.
func Repr(s string) string { return pyjson.StrRepr(s) }

// ReprList renders a list of strings as Python prints it: ['a', 'b'].
func ReprList(items []string) string {
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = Repr(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// FloatRepr renders a float the way Python's repr() does: the shortest digits
// that round-trip, in fixed notation when the decimal exponent is in
// [-4, 16), else in scientific notation ("1800.0", "0.0001", "1e+16", "1e-05").
func FloatRepr(f float64) string {
	if s, ok := nonFinite(f); ok {
		return s
	}
	return pyjson.FloatRepr(f)
}

// FormatFixed0 renders a float as Python's f"{x:.0f}" does: rounded half to
// even, with "inf", "-inf" and "nan" where Go's %.0f writes "+Inf", "-Inf"
// and "NaN".
func FormatFixed0(f float64) string {
	if s, ok := nonFinite(f); ok {
		return s
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

// nonFinite spells infinities and NaN as Python's repr and format do.
func nonFinite(f float64) (string, bool) {
	switch {
	case math.IsInf(f, 1):
		return "inf", true
	case math.IsInf(f, -1):
		return "-inf", true
	case math.IsNaN(f):
		return "nan", true
	}
	return "", false
}
