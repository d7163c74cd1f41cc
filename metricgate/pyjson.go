package metricgate

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// pyKind is the Python type a JSON value decodes to with json.loads.
type pyKind uint8

const (
	pyNone pyKind = iota
	pyBool
	pyInt
	pyFloat
	pyStr
	pyList
	pyDict
)

// pyValue is one value as Python's json module decodes it: ints exact
// (json.loads gives a Python int of any size), floats as float() reads them,
// and NaN, Infinity and -Infinity accepted as bare constants, as Python's
// decoder does by default.
type pyValue struct {
	kind pyKind
	b    bool
	i    *big.Int
	f    float64
	s    string
	list []pyValue
	// dict holds an object's members, the last of a repeated key winning
	// (dict order: a key keeps its first place).
	dict *pyDictValue
}

type pyDictValue struct {
	keys []string
	vals map[string]pyValue
}

func (d *pyDictValue) get(k string) (pyValue, bool) {
	v, ok := d.vals[k]
	return v, ok
}

// typeName is the Python type's name, for messages.
func (v pyValue) typeName() string {
	return [...]string{"NoneType", "bool", "int", "float", "str", "list", "dict"}[v.kind]
}

// maxJSONDepth bounds nesting: CPython's decoder stops at its recursion
// limit (about 1000 levels) with RecursionError; miles-ci stops earlier,
// and a record nests two levels.
const maxJSONDepth = 500

// maxIntDigits is CPython's limit on int() of a decimal string (3.11's
// sys.int_info.default_max_str_digits): json.loads of a longer integer
// raises ValueError.
const maxIntDigits = 4300

// errJSON is a line json.loads refuses.
var errJSON = errors.New("not JSON")

// parsePyJSON decodes one document as json.loads(s) does: whitespace
// " \t\n\r" around it, nothing after it.
func parsePyJSON(s string) (pyValue, error) {
	p := jsonParser{s: s}
	p.ws()
	if strings.HasPrefix(s, "\ufeff") {
		return pyValue{}, fmt.Errorf("%w: it starts with a UTF-8 byte order mark", errJSON)
	}
	v, err := p.value(0)
	if err != nil {
		return pyValue{}, err
	}
	p.ws()
	if p.i != len(s) {
		return pyValue{}, fmt.Errorf("%w: extra data at character %d", errJSON, utf8.RuneCountInString(s[:p.i]))
	}
	return v, nil
}

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) fail(what string) error {
	return fmt.Errorf("%w: %s at character %d", errJSON, what, utf8.RuneCountInString(p.s[:p.i]))
}

func (p *jsonParser) value(depth int) (pyValue, error) {
	if p.i >= len(p.s) {
		return pyValue{}, p.fail("expecting value")
	}
	switch c := p.s[p.i]; {
	case c == '"':
		s, err := p.str()
		return pyValue{kind: pyStr, s: s}, err
	case c == '[':
		if depth >= maxJSONDepth {
			return pyValue{}, p.fail("nested too deep")
		}
		return p.array(depth + 1)
	case c == '{':
		if depth >= maxJSONDepth {
			return pyValue{}, p.fail("nested too deep")
		}
		return p.object(depth + 1)
	case c == '-' || c >= '0' && c <= '9':
		if strings.HasPrefix(p.s[p.i:], "-Infinity") {
			p.i += len("-Infinity")
			return pyValue{kind: pyFloat, f: math.Inf(-1)}, nil
		}
		return p.number()
	}
	for _, k := range []struct {
		word string
		v    pyValue
	}{
		{"null", pyValue{kind: pyNone}},
		{"true", pyValue{kind: pyBool, b: true}},
		{"false", pyValue{kind: pyBool}},
		{"NaN", pyValue{kind: pyFloat, f: math.NaN()}},
		{"Infinity", pyValue{kind: pyFloat, f: math.Inf(1)}},
	} {
		if strings.HasPrefix(p.s[p.i:], k.word) {
			p.i += len(k.word)
			return k.v, nil
		}
	}
	return pyValue{}, p.fail("expecting value")
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)? as the C
// scanner does (ASCII digits only): an int without a fraction or exponent,
// else a float.
func (p *jsonParser) number() (pyValue, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i >= len(p.s) || p.s[p.i] < '0' || p.s[p.i] > '9' {
		p.i = start
		return pyValue{}, p.fail("expecting value")
	}
	if p.s[p.i] == '0' {
		p.i++
	} else {
		digits()
	}
	isFloat := false
	if p.i+1 < len(p.s) && p.s[p.i] == '.' && p.s[p.i+1] >= '0' && p.s[p.i+1] <= '9' {
		p.i++
		digits()
		isFloat = true
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		save := p.i
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.i = save
		} else {
			isFloat = true
		}
	}
	text := p.s[start:p.i]
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return pyValue{}, p.fail("bad number")
		}
		return pyValue{kind: pyFloat, f: f}, nil
	}
	if len(strings.TrimPrefix(text, "-")) > maxIntDigits {
		return pyValue{}, fmt.Errorf("%w: an integer of more than %d digits (Python's int() refuses it)", errJSON, maxIntDigits)
	}
	n, ok := new(big.Int).SetString(text, 10)
	if !ok {
		return pyValue{}, p.fail("bad number")
	}
	return pyValue{kind: pyInt, i: n}, nil
}

// str reads a string as the strict decoder does: no control character
// below 0x20, the JSON escapes, \uXXXX pairs joined. A lone surrogate
// (which Python keeps) becomes U+FFFD.
func (p *jsonParser) str() (string, error) {
	p.i++ // the quote
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.fail("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.fail("invalid control character")
		case c != '\\':
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			b.WriteRune(r)
			p.i += size
			continue
		}
		p.i++
		if p.i >= len(p.s) {
			return "", p.fail("unterminated string")
		}
		esc := p.s[p.i]
		p.i++
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
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
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("invalid \\uXXXX escape")
			}
			if utf16.IsSurrogate(r) && r < 0xdc00 && strings.HasPrefix(p.s[p.i:], "\\u") {
				save := p.i
				p.i += 2
				if r2, ok := p.hex4(); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
					r = utf16.DecodeRune(r, r2)
				} else {
					p.i = save
				}
			}
			b.WriteRune(r) // a lone surrogate is written as U+FFFD
		default:
			p.i--
			return "", p.fail("invalid \\escape")
		}
	}
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil || strings.ContainsAny(p.s[p.i:p.i+4], "+-_xX") {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

func (p *jsonParser) array(depth int) (pyValue, error) {
	p.i++
	v := pyValue{kind: pyList, list: []pyValue{}}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return v, nil
	}
	for {
		p.ws()
		el, err := p.value(depth)
		if err != nil {
			return pyValue{}, err
		}
		v.list = append(v.list, el)
		p.ws()
		if p.i >= len(p.s) {
			return pyValue{}, p.fail("expecting ',' delimiter")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return v, nil
		default:
			return pyValue{}, p.fail("expecting ',' delimiter")
		}
	}
}

func (p *jsonParser) object(depth int) (pyValue, error) {
	p.i++
	d := &pyDictValue{vals: map[string]pyValue{}}
	v := pyValue{kind: pyDict, dict: d}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return v, nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return pyValue{}, p.fail("expecting property name enclosed in double quotes")
		}
		k, err := p.str()
		if err != nil {
			return pyValue{}, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return pyValue{}, p.fail("expecting ':' delimiter")
		}
		p.i++
		p.ws()
		el, err := p.value(depth)
		if err != nil {
			return pyValue{}, err
		}
		if _, seen := d.vals[k]; !seen {
			d.keys = append(d.keys, k)
		}
		d.vals[k] = el
		p.ws()
		if p.i >= len(p.s) {
			return pyValue{}, p.fail("expecting ',' delimiter")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return v, nil
		default:
			return pyValue{}, p.fail("expecting ',' delimiter")
		}
	}
}
