package pysource

import (
	"fmt"
	"math"
	"strings"
)

// Python's json.dumps renderings (default separators, ensure_ascii), for
// the outputs Miles' scripts write with it.

// JSONString is s as Python's json.dumps writes a string (ensure_ascii).
func JSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x7f && r < 0x10000):
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

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
