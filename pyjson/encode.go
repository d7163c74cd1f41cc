package pyjson

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

// Dumps is json.dumps(v, separators=(",", ":"), sort_keys=sortKeys):
// ensure_ascii, NaN and Infinity as Python writes them.
func Dumps(v Value, sortKeys bool) string {
	var b strings.Builder
	dump(&b, v, sortKeys)
	return b.String()
}

func dump(b *strings.Builder, v Value, sortKeys bool) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(map[bool]string{true: "true", false: "false"}[v.Bool])
	case Int:
		b.WriteString(v.Int.String())
	case Float:
		switch {
		case math.IsNaN(v.Float):
			b.WriteString("NaN")
		case math.IsInf(v.Float, 1):
			b.WriteString("Infinity")
		case math.IsInf(v.Float, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(FloatRepr(v.Float))
		}
	case Str:
		b.WriteString(Quote(v.Str))
	case List:
		b.WriteByte('[')
		for i, e := range v.List {
			if i > 0 {
				b.WriteByte(',')
			}
			dump(b, e, sortKeys)
		}
		b.WriteByte(']')
	case Dict:
		keys := append([]string(nil), v.Dict.Keys...)
		if sortKeys {
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(Quote(k))
			b.WriteByte(':')
			e, _ := v.Dict.Get(k)
			dump(b, e, sortKeys)
		}
		b.WriteByte('}')
	}
}

// Quote is a str as json.dumps writes it (ensure_ascii).
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range Runes(s) {
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
		case r >= ' ' && r <= '~':
			b.WriteRune(r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Repr is repr(v).
func Repr(v Value) string {
	switch v.Kind {
	case Null:
		return "None"
	case Bool:
		if v.Bool {
			return "True"
		}
		return "False"
	case Int:
		return v.Int.String()
	case Float:
		switch {
		case math.IsNaN(v.Float):
			return "nan"
		case math.IsInf(v.Float, 1):
			return "inf"
		case math.IsInf(v.Float, -1):
			return "-inf"
		}
		return FloatRepr(v.Float)
	case Str:
		return StrRepr(v.Str)
	case List:
		parts := make([]string, len(v.List))
		for i, e := range v.List {
			parts[i] = Repr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	parts := make([]string, len(v.Dict.Keys))
	for i, k := range v.Dict.Keys {
		parts[i] = StrRepr(k) + ": " + Repr(v.Dict.Vals[i])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// StrRepr is repr(s) of a str.
func StrRepr(s string) string {
	rs := Runes(s)
	q := '\''
	hasSingle, hasDouble := false, false
	for _, r := range rs {
		hasSingle = hasSingle || r == '\''
		hasDouble = hasDouble || r == '"'
	}
	if hasSingle && !hasDouble {
		q = '"'
	}
	var b strings.Builder
	b.WriteRune(q)
	for _, r := range rs {
		switch {
		case r == q || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case !(0xd800 <= r && r <= 0xdfff) && unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(q)
	return b.String()
}

// FloatRepr is repr of a finite float: the shortest digits that read back,
// fixed notation for a decimal exponent in [-4, 16), else scientific.
func FloatRepr(f float64) string {
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	neg := strings.HasPrefix(mant, "-")
	digits := strings.Replace(strings.TrimPrefix(mant, "-"), ".", "", 1)
	sign := ""
	if neg {
		sign = "-"
	}
	if e < -4 || e >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := fmt.Sprintf("%+03d", e)
		return sign + m + "e" + es
	}
	if e < 0 {
		return sign + "0." + strings.Repeat("0", -e-1) + digits
	}
	if len(digits) <= e+1 {
		return sign + digits + strings.Repeat("0", e+1-len(digits)) + ".0"
	}
	return sign + digits[:e+1] + "." + digits[e+1:]
}
