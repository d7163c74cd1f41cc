package pysource

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/runenames"
)

// This file checks literals the way CPython 3.11's parser does when it builds
// them: escapes in str and bytes literals, bytes that are not ASCII, str and
// bytes concatenated, the replacement fields of f-strings (each one parsed as
// an expression), and decimal integers too long to convert.

// maxIntDigits is CPython's default int_max_str_digits: a decimal integer
// literal with more significant digits is a SyntaxError.
const maxIntDigits = 4300

// checkNumber refuses a decimal integer literal longer than CPython converts.
// The test of the length is inline; longNumber does the rest.
func checkNumber(s string, line int) *SyntaxError {
	if len(s) <= maxIntDigits {
		return nil
	}
	return longNumber(s, line)
}

// longNumber is checkNumber for a literal of more than maxIntDigits bytes.
func longNumber(s string, line int) *SyntaxError {
	if strings.ContainsAny(s, ".eEjJxXoObB") {
		return nil
	}
	digits := strings.TrimLeft(strings.ReplaceAll(s, "_", ""), "0")
	if len(digits) > maxIntDigits {
		return &SyntaxError{Line: line, Msg: fmt.Sprintf("Exceeds the limit (%d digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge integer literals to avoid decimal conversion limits.", maxIntDigits, len(digits))}
	}
	return nil
}

// stringParts splits a string token into its lowercase prefix and its body
// (between the quotes).
func stringParts(tok string) (prefix, body string) {
	i := 0
	for tok[i] != '\'' && tok[i] != '"' {
		i++
	}
	prefix = tok[:i]
	if i > 0 {
		prefix = strings.ToLower(prefix)
	}
	body = tok[i:]
	if len(body) >= 6 && (strings.HasPrefix(body, `"""`) || strings.HasPrefix(body, `'''`)) {
		return prefix, body[3 : len(body)-3]
	}
	return prefix, body[1 : len(body)-1]
}

// checkStrings checks adjacent string tokens (one atom) and returns the node
// they make: a constant, or an f-string.
func checkStrings(src string, toks []tok) (kind, *SyntaxError) {
	if len(toks) == 1 {
		// The common single literal without a prefix: only its escapes
		// are checked, and only where it has a backslash (the lexer
		// marks those).
		t := toks[0]
		if q := src[t.start]; q == '"' || q == '\'' {
			if t.code != strBackslash {
				return kLiteral, nil
			}
			body := src[t.start+1 : t.end-1]
			if t.end-t.start >= 6 && src[t.start+1] == q && src[t.start+2] == q {
				body = src[t.start+3 : t.end-3]
			}
			return kLiteral, checkEscapes(body, false, t.Line())
		}
		// The common f-string: prefix f alone, no backslash, and fields
		// that are names (plainFString), which checkFString accepts.
		if q := src[t.start+1]; src[t.start]|0x20 == 'f' && (q == '"' || q == '\'') && t.code != strBackslash {
			b := src[t.start+1 : t.end] // as stringParts splits it
			body := b[1 : len(b)-1]
			if len(b) >= 6 && b[1] == q && b[2] == q {
				body = b[3 : len(b)-3]
			}
			if plainFString(body) {
				return kFString, nil
			}
		}
	}
	k := kLiteral
	bytesSeen, textSeen := false, false
	for _, t := range toks {
		prefix, body := stringParts(src[t.start:t.end])
		raw, isBytes, isF := false, false, false
		for i := 0; i < len(prefix); i++ {
			switch prefix[i] {
			case 'r':
				raw = true
			case 'b':
				isBytes = true
			case 'f':
				isF = true
			}
		}
		if isBytes {
			bytesSeen = true
			for i := 0; i < len(body); i++ {
				if body[i] >= utf8.RuneSelf {
					return k, &SyntaxError{Line: t.Line(), Msg: "bytes can only contain ASCII literal characters"}
				}
			}
		} else {
			textSeen = true
		}
		if bytesSeen && textSeen {
			return k, &SyntaxError{Line: toks[0].Line(), Msg: "cannot mix bytes and nonbytes literals"}
		}
		switch {
		case isF:
			k = kFString
			if err := checkFString(body, raw, t.Line()); err != nil {
				return k, err
			}
		case !raw:
			if err := checkEscapes(body, isBytes, t.Line()); err != nil {
				return k, err
			}
		}
	}
	return k, nil
}

// checkEscapes refuses the escapes CPython's decoder refuses: a truncated
// \x, \u or \U, one beyond U+10FFFF, a malformed or unknown \N{NAME} (str
// only; bytes only know \x). Unknown escapes such as \d are accepted, as
// CPython does (with a warning). Error positions count as CPython's do: a
// non-ASCII character counts 10 (it becomes \UXXXXXXXX before decoding).
func checkEscapes(body string, isBytes bool, line int) *SyntaxError {
	if strings.IndexByte(body, '\\') < 0 {
		return nil
	}
	pos := 0 // position in CPython's transformed buffer
	for i := 0; i < len(body); {
		c := body[i]
		if c >= utf8.RuneSelf {
			_, size := utf8.DecodeRuneInString(body[i:])
			i += size
			pos += 10
			continue
		}
		if c != '\\' {
			i++
			pos++
			continue
		}
		if i+1 >= len(body) || body[i+1] >= utf8.RuneSelf {
			i++
			pos += 6 // \u005c
			continue
		}
		start := pos
		e := body[i+1]
		n := 0
		msg := ""
		switch e {
		case 'x':
			n, msg = 2, `truncated \xXX escape`
		case 'u':
			n, msg = 4, `truncated \uXXXX escape`
		case 'U':
			n, msg = 8, `truncated \UXXXXXXXX escape`
		case 'N':
			if isBytes {
				break
			}
			end, ok, problem := checkNamedEscape(body[i+2:])
			if !ok {
				return escapeError(line, start, start+1+end, problem)
			}
			i += 2 + end
			pos += 2 + end
			continue
		}
		if n == 0 || isBytes && e != 'x' {
			i += 2
			pos += 2
			continue
		}
		var v uint64
		j := i + 2
		for k := 0; k < n; k++ {
			if j >= len(body) || !isHexDigit(body[j]) {
				if isBytes {
					return &SyntaxError{Line: line, Msg: fmt.Sprintf(`(value error) invalid \x escape at position %d`, i)}
				}
				return escapeError(line, start, start+(j-i)-1, msg)
			}
			v = v<<4 | uint64(hexValue(body[j]))
			j++
		}
		if v > utf8.MaxRune {
			return escapeError(line, start, start+j-i-1, "illegal Unicode character")
		}
		pos += j - i
		i = j
	}
	return nil
}

func hexValue(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

func escapeError(line, from, to int, msg string) *SyntaxError {
	return &SyntaxError{Line: line, Msg: fmt.Sprintf("(unicode error) 'unicodeescape' codec can't decode bytes in position %d-%d: %s", from, to, msg)}
}

// checkNamedEscape reads what follows \N: {NAME}. It returns how many bytes
// the escape takes after the N, or, when it is refused, where CPython's error
// range ends (relative to the N) and why.
func checkNamedEscape(rest string) (int, bool, string) {
	if rest == "" || rest[0] != '{' {
		return 0, false, `malformed \N character escape`
	}
	end := strings.IndexByte(rest, '}')
	if end < 0 {
		return len(rest), false, `malformed \N character escape`
	}
	if end == 1 {
		return 1, false, `malformed \N character escape`
	}
	if _, ok := lookupName(rest[1:end]); !ok {
		return end + 1, false, "unknown Unicode character name"
	}
	return end + 1, true, ""
}

var (
	namesOnce sync.Once
	names     map[string]rune
)

// namedPlanes are the code point ranges holding every character runenames
// names (planes 0-2 and 14 in Unicode 15.0; TestNamedPlanes checks the rest
// has none): building the name table looks up a quarter of the code points.
var namedPlanes = [][2]rune{{0, 0x30000}, {0xE0000, 0xF0000}}

// lookupName finds a character by its Unicode name as Python's \N{...} does:
// case-insensitively for the names of the Unicode database
// (golang.org/x/text/unicode/runenames), and by the algorithmic names
// "CJK UNIFIED IDEOGRAPH-XXXX" and "HANGUL SYLLABLE ..." (upper case only).
// Name aliases (NameAliases.txt: \N{NULL}, \N{NBSP}) are not in runenames and
// are not known here.
func lookupName(name string) (rune, bool) {
	if r, ok := cjkName(name); ok {
		return r, true
	}
	if r, ok := hangulName(name); ok {
		return r, true
	}
	namesOnce.Do(func() {
		names = make(map[string]rune, 35000)
		for _, planes := range namedPlanes {
			for r := planes[0]; r < planes[1]; r++ {
				if n := runenames.Name(r); n != "" && n[0] != '<' {
					names[n] = r
				}
			}
		}
	})
	r, ok := names[strings.ToUpper(name)]
	return r, ok
}

// cjkName reads "CJK UNIFIED IDEOGRAPH-" and 4 or 5 upper-case hex digits
// naming a unified ideograph.
func cjkName(name string) (rune, bool) {
	hex, ok := strings.CutPrefix(name, "CJK UNIFIED IDEOGRAPH-")
	if !ok || len(hex) != 4 && len(hex) != 5 {
		return 0, false
	}
	var r rune
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		if !isDigit(c) && (c < 'A' || c > 'F') {
			return 0, false
		}
		r = r<<4 | rune(hexValue(c))
	}
	return r, strings.HasPrefix(runenames.Name(r), "<CJK Ideograph")
}

// Hangul syllable names are built from jamo short names (Unicode 3.12).
var (
	hangulL = []string{"G", "GG", "N", "D", "DD", "R", "M", "B", "BB", "S", "SS", "", "J", "JJ", "C", "K", "T", "P", "H"}
	hangulV = []string{"A", "AE", "YA", "YAE", "EO", "E", "YEO", "YE", "O", "WA", "WAE", "OE", "YO", "U", "WEO", "WE", "WI", "YU", "EU", "YI", "I"}
	hangulT = []string{"", "G", "GG", "GS", "N", "NJ", "NH", "D", "L", "LG", "LM", "LB", "LS", "LT", "LP", "LH", "M", "B", "BS", "S", "SS", "NG", "J", "C", "K", "T", "P", "H"}
)

// hangulName reads "HANGUL SYLLABLE " and the syllable's jamo names.
func hangulName(name string) (rune, bool) {
	rest, ok := strings.CutPrefix(name, "HANGUL SYLLABLE ")
	if !ok {
		return 0, false
	}
	// Each part is the longest short name that matches, as Python's
	// find_syllable does.
	longest := func(s string, table []string) (int, int) {
		best, n := -1, -1
		for i, j := range table {
			if len(j) > n && strings.HasPrefix(s, j) {
				best, n = i, len(j)
			}
		}
		return best, n
	}
	l, n := longest(rest, hangulL)
	rest = rest[max(n, 0):]
	v, m := longest(rest, hangulV)
	rest = rest[max(m, 0):]
	t, k := longest(rest, hangulT)
	rest = rest[max(k, 0):]
	if l < 0 || v < 0 || t < 0 || rest != "" {
		return 0, false
	}
	return rune(0xAC00 + (l*21+v)*28 + t), true
}

// plainFString reports an f-string body (not raw) that checkFString accepts
// at once: text with no backslash and only doubled braces, and fields that
// nameField reads (a name, with a !s, !r or !a conversion or none). It
// returns false for anything else, which checkFString then reads.
func plainFString(s string) bool {
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			return false
		case '}':
			if i+1 >= len(s) || s[i+1] != '}' {
				return false
			}
			i += 2
		case '{':
			if i+1 < len(s) && s[i+1] == '{' {
				i += 2
				continue
			}
			end, ok := fstringChecker{s: s}.nameField(i + 1)
			if !ok {
				return false
			}
			i = end
		default:
			i++
		}
	}
	return true
}
