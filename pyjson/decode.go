package pyjson

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SyntaxError is json.JSONDecodeError: its message and the code-point
// position, rendered as Python renders it.
type SyntaxError struct {
	Msg          string
	Pos          int
	Line, Column int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s: line %d column %d (char %d)", e.Msg, e.Line, e.Column, e.Pos)
}

// HookError is what a strict decode's hooks raise (the script's
// object_pairs_hook and parse_constant): a duplicate key or NaN/Infinity.
// It is not a JSONDecodeError, so the script does not wrap it.
type HookError struct{ Msg string }

func (e *HookError) Error() string { return e.Msg }

// CrashError is input on which Python's json stops with an exception the
// script does not catch (RecursionError, ValueError): the script ends with
// a traceback.
type CrashError struct{ Msg string }

func (e *CrashError) Error() string { return e.Msg }

// CPython's json decodes a nested array or object in one more frame of its
// recursion limit (1000), which the caller's Python frames share: the
// script's load_json is 6 frames deep, so it reads 993 levels and stops at
// the 994th with a RecursionError. StrictDepth is that bound; LooseDepth
// the one of the API answers, which the script reads 8 to 11 frames deep
// (988 is the deepest call's).
const (
	StrictDepth = 993
	LooseDepth  = 988
)

// maxIntDigits is CPython 3.11's int_max_str_digits: json.loads of a longer
// integer raises ValueError.
const maxIntDigits = 4300

// Strict is the script's load_json: duplicate keys and NaN, Infinity and
// -Infinity are refused with its messages.
type Mode bool

const (
	// Loose is json.loads with its defaults (the script reads API answers so).
	Loose Mode = false
	// Strict adds the script's hooks (it reads the event and the policy so).
	Strict Mode = true
)

// Decode is json.loads(text) on a Python str given as code points.
func Decode(text []rune, mode Mode) (Value, error) {
	d := &decoder{s: text, strict: mode == Strict, maxDepth: LooseDepth}
	if d.strict {
		d.maxDepth = StrictDepth
	}
	if len(text) > 0 && text[0] == 0xfeff {
		return Value{}, d.err("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0)
	}
	v, end, err := d.scan(d.ws(0), 0)
	if err != nil {
		return Value{}, err
	}
	if end = d.ws(end); end != len(text) {
		return Value{}, d.err("Extra data", end)
	}
	return v, nil
}

// DecodeBytes is json.loads(data.decode("utf-8")): data that is not UTF-8
// is an error as a JSONDecodeError is (the script reads both as "invalid JSON").
func DecodeBytes(data []byte, mode Mode) (Value, error) {
	if !utf8.Valid(data) {
		return Value{}, &SyntaxError{Msg: "not UTF-8"}
	}
	return Decode([]rune(string(data)), mode)
}

type decoder struct {
	s        []rune
	strict   bool
	maxDepth int
}

// stop is the C scanner's StopIteration: no value starts at pos.
type stop struct{ pos int }

func (e *stop) Error() string { return "Expecting value" }

func (d *decoder) err(msg string, pos int) *SyntaxError {
	line := 1
	last := -1
	for i := 0; i < pos && i < len(d.s); i++ {
		if d.s[i] == '\n' {
			line++
			last = i
		}
	}
	return &SyntaxError{Msg: msg, Pos: pos, Line: line, Column: pos - last}
}

func (d *decoder) ws(i int) int {
	for i < len(d.s) && (d.s[i] == ' ' || d.s[i] == '\t' || d.s[i] == '\n' || d.s[i] == '\r') {
		i++
	}
	return i
}

// scan is scan_once at idx; a *stop becomes "Expecting value" there.
func (d *decoder) scan(idx, depth int) (Value, int, error) {
	v, end, err := d.scanOnce(idx, depth)
	if s, ok := err.(*stop); ok {
		return Value{}, 0, d.err("Expecting value", s.pos)
	}
	return v, end, err
}

func (d *decoder) has(idx int, word string) bool {
	if idx+len(word) > len(d.s) {
		return false
	}
	for i, c := range word {
		if d.s[idx+i] != c {
			return false
		}
	}
	return true
}

func (d *decoder) scanOnce(idx, depth int) (Value, int, error) {
	if idx >= len(d.s) {
		return Value{}, 0, &stop{idx}
	}
	switch d.s[idx] {
	case '"':
		s, end, err := d.str(idx + 1)
		return StrValue(s), end, err
	case '{', '[':
		if depth >= d.maxDepth {
			return Value{}, 0, &CrashError{"RecursionError: maximum recursion depth exceeded while decoding a JSON document"}
		}
		if d.s[idx] == '{' {
			return d.object(idx+1, depth+1)
		}
		return d.array(idx+1, depth+1)
	case 'n':
		if d.has(idx, "null") {
			return NoneValue(), idx + 4, nil
		}
	case 't':
		if d.has(idx, "true") {
			return BoolValue(true), idx + 4, nil
		}
	case 'f':
		if d.has(idx, "false") {
			return BoolValue(false), idx + 5, nil
		}
	case 'N':
		if d.has(idx, "NaN") {
			return d.constant("NaN", idx+3)
		}
	case 'I':
		if d.has(idx, "Infinity") {
			return d.constant("Infinity", idx+8)
		}
	case '-':
		if d.has(idx, "-Infinity") {
			return d.constant("-Infinity", idx+9)
		}
	}
	return d.number(idx)
}

func (d *decoder) constant(word string, end int) (Value, int, error) {
	if d.strict {
		return Value{}, 0, &HookError{"non-standard JSON number: " + word}
	}
	f, _ := strconv.ParseFloat(word, 64)
	return FloatValue(f), end, nil
}

func isDigit(c rune) bool { return '0' <= c && c <= '9' }

// number is _match_number_unicode.
func (d *decoder) number(start int) (Value, int, error) {
	s, n, idx := d.s, len(d.s), start
	if s[idx] == '-' {
		idx++
		if idx >= n {
			return Value{}, 0, &stop{start}
		}
	}
	switch {
	case s[idx] >= '1' && s[idx] <= '9':
		for idx++; idx < n && isDigit(s[idx]); idx++ {
		}
	case s[idx] == '0':
		idx++
	default:
		return Value{}, 0, &stop{start}
	}
	isFloat := false
	if idx+1 < n && s[idx] == '.' && isDigit(s[idx+1]) {
		isFloat = true
		for idx += 2; idx < n && isDigit(s[idx]); idx++ {
		}
	}
	if idx < n && (s[idx] == 'e' || s[idx] == 'E') {
		e := idx
		idx++
		if idx < n && (s[idx] == '-' || s[idx] == '+') {
			idx++
		}
		for idx < n && isDigit(s[idx]) {
			idx++
		}
		if isDigit(s[idx-1]) {
			isFloat = true
		} else {
			idx = e
		}
	}
	text := string(s[start:idx])
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !isRange(err) {
			return Value{}, 0, &CrashError{"ValueError: could not convert string to float: " + text}
		}
		return FloatValue(f), idx, nil
	}
	if digits := len(strings.TrimPrefix(text, "-")); digits > maxIntDigits {
		return Value{}, 0, &CrashError{fmt.Sprintf("ValueError: Exceeds the limit (%d digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", maxIntDigits, digits)}
	}
	i, _ := new(big.Int).SetString(text, 10)
	return BigValue(i), idx, nil
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func hexValue(c rune) (rune, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// hex4 reads 4 hex digits at i.
func (d *decoder) hex4(i int) (rune, bool) {
	var c rune
	for k := i; k < i+4; k++ {
		h, ok := hexValue(d.s[k])
		if !ok {
			return 0, false
		}
		c = c<<4 | h
	}
	return c, true
}

// str is scanstring_unicode (strict) from end, just after the opening quote.
func (d *decoder) str(end int) (string, int, error) {
	s, n, begin := d.s, len(d.s), end-1
	var b strings.Builder
	for {
		next := end
		for next < n && s[next] != '"' && s[next] != '\\' {
			if s[next] <= 0x1f {
				return "", 0, d.err("Invalid control character at", next)
			}
			next++
		}
		if next >= n {
			return "", 0, d.err("Unterminated string starting at", begin)
		}
		for _, r := range s[end:next] {
			b.WriteRune(r)
		}
		if s[next] == '"' {
			return b.String(), next + 1, nil
		}
		next++ // past the backslash
		if next >= n {
			return "", 0, d.err("Unterminated string starting at", begin)
		}
		c := s[next]
		if c != 'u' {
			end = next + 1
			switch c {
			case '"', '\\', '/':
				b.WriteRune(c)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			default:
				return "", 0, d.err("Invalid \\escape", end-2)
			}
			continue
		}
		u := next
		end = u + 5
		if end >= n {
			return "", 0, d.err("Invalid \\uXXXX escape", u)
		}
		r, ok := d.hex4(u + 1)
		if !ok {
			return "", 0, d.err("Invalid \\uXXXX escape", u)
		}
		if 0xd800 <= r && r <= 0xdbff && end+6 < n && s[end] == '\\' && s[end+1] == 'u' {
			r2, ok := d.hex4(end + 2)
			if !ok {
				return "", 0, d.err("Invalid \\uXXXX escape", end+1)
			}
			if 0xdc00 <= r2 && r2 <= 0xdfff {
				r = 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00)
				end += 6
			}
		}
		AppendRune(&b, r)
	}
}

func (d *decoder) object(idx, depth int) (Value, int, error) {
	s, n := d.s, len(d.s)
	type pair struct {
		k string
		v Value
	}
	var pairs []pair
	idx = d.ws(idx)
	if idx >= n || s[idx] != '}' {
		for {
			if idx >= n || s[idx] != '"' {
				return Value{}, 0, d.err("Expecting property name enclosed in double quotes", idx)
			}
			key, end, err := d.str(idx + 1)
			if err != nil {
				return Value{}, 0, err
			}
			idx = d.ws(end)
			if idx >= n || s[idx] != ':' {
				return Value{}, 0, d.err("Expecting ':' delimiter", idx)
			}
			v, end, err := d.scan(d.ws(idx+1), depth)
			if err != nil {
				return Value{}, 0, err
			}
			pairs = append(pairs, pair{key, v})
			idx = d.ws(end)
			if idx < n && s[idx] == '}' {
				break
			}
			if idx >= n || s[idx] != ',' {
				return Value{}, 0, d.err("Expecting ',' delimiter", idx)
			}
			idx = d.ws(idx + 1)
		}
	}
	o := &Object{}
	for _, p := range pairs {
		if d.strict {
			if _, dup := o.Get(p.k); dup {
				return Value{}, 0, &HookError{"duplicate JSON key: " + p.k}
			}
		}
		o.set(p.k, p.v)
	}
	return DictValue(o), idx + 1, nil
}

func (d *decoder) array(idx, depth int) (Value, int, error) {
	s, n := d.s, len(d.s)
	items := []Value{}
	idx = d.ws(idx)
	if idx >= n || s[idx] != ']' {
		for {
			v, end, err := d.scan(idx, depth)
			if err != nil {
				return Value{}, 0, err
			}
			items = append(items, v)
			idx = d.ws(end)
			if idx < n && s[idx] == ']' {
				break
			}
			if idx >= n || s[idx] != ',' {
				return Value{}, 0, d.err("Expecting ',' delimiter", idx)
			}
			idx = d.ws(idx + 1)
		}
	}
	return ListValue(items...), idx + 1, nil
}
