package pysource

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// NumKind tells the Python type of a number literal.
type NumKind int

// Number literal types.
const (
	Int NumKind = iota
	Float
	Complex
)

// NumberLit is a parsed Python number literal.
type NumberLit struct {
	Kind NumKind
	// Value is the literal as a float64, as Python's float(x) would give it
	// (for Complex, the imaginary part).
	Value float64
	// Overflow is set for an int too large for a float64 (Python raises
	// OverflowError on float() of it).
	Overflow bool
}

var errBadNumber = errors.New("invalid number literal")

// validUnderscores checks Python's rule: an underscore only between two digits
// (or right after a base prefix).
func validUnderscores(s string, isDigit func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '_' {
			continue
		}
		if i == 0 || i == len(s)-1 || !isDigit(s[i-1]) || !isDigit(s[i+1]) {
			return false
		}
	}
	return true
}

// ParseNumber parses a Python number literal (int, float or imaginary).
func ParseNumber(text string) (NumberLit, error) {
	if n, ok := shortDecimal(text); ok {
		return NumberLit{Kind: Int, Value: float64(n)}, nil
	}
	return parseNumber(text)
}

// parseNumber is ParseNumber for every literal (math/big for the ints).
func parseNumber(text string) (NumberLit, error) {
	s := strings.ToLower(text)
	if s == "" {
		return NumberLit{}, errBadNumber
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b') {
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[s[1]]
		digits := s[2:]
		digits = strings.TrimPrefix(digits, "_")
		isD := func(c byte) bool {
			v, err := strconv.ParseUint(string(c), 36, 8)
			return err == nil && int(v) < base
		}
		if digits == "" || !validUnderscores(digits, isD) {
			return NumberLit{}, errBadNumber
		}
		n, ok := new(big.Int).SetString(strings.ReplaceAll(digits, "_", ""), base)
		if !ok {
			return NumberLit{}, errBadNumber
		}
		return intLit(n), nil
	}
	isDec := func(c byte) bool { return c >= '0' && c <= '9' }
	imag := strings.HasSuffix(s, "j")
	body := strings.TrimSuffix(s, "j")
	if body == "" || !validUnderscores(body, isDec) {
		return NumberLit{}, errBadNumber
	}
	// Only digits, '.', 'e', a sign right after 'e', and '_' may appear.
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(isDec(c) || c == '.' || c == 'e' || c == '_' || ((c == '+' || c == '-') && i > 0 && body[i-1] == 'e')) {
			return NumberLit{}, errBadNumber
		}
	}
	plain := strings.ReplaceAll(body, "_", "")
	isFloat := strings.ContainsAny(plain, ".e")
	if !isFloat && !imag {
		if len(plain) > 1 && plain[0] == '0' && strings.Trim(plain, "0") != "" {
			return NumberLit{}, errBadNumber // leading zeros in a decimal integer
		}
		n, ok := new(big.Int).SetString(plain, 10)
		if !ok {
			return NumberLit{}, errBadNumber
		}
		return intLit(n), nil
	}
	if strings.Count(plain, ".") > 1 || strings.Count(plain, "e") > 1 ||
		strings.HasSuffix(plain, "e") || strings.HasSuffix(plain, "+") || strings.HasSuffix(plain, "-") ||
		strings.HasPrefix(plain, "e") || strings.Contains(plain, ".e") && strings.HasPrefix(plain, ".") ||
		strings.Contains(plain, "e") && strings.Index(plain, ".") > strings.Index(plain, "e") {
		return NumberLit{}, errBadNumber
	}
	f, err := strconv.ParseFloat(plain, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return NumberLit{}, errBadNumber
	}
	if imag {
		return NumberLit{Kind: Complex, Value: f}, nil
	}
	return NumberLit{Kind: Float, Value: f}, nil
}

// shortDecimal reads the common int literal, 1 to 15 decimal digits with no
// '_' and no leading zero (or a lone "0"), without math/big: the general
// path accepts exactly these as ints, and below 10^15 < 2^53 the value is
// exact in a float64, as big.Float's conversion would give it.
func shortDecimal(text string) (uint64, bool) {
	if len(text) == 0 || len(text) > 15 || text[0] == '0' && len(text) > 1 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

func intLit(n *big.Int) NumberLit {
	f, _ := new(big.Float).SetInt(n).Float64()
	return NumberLit{Kind: Int, Value: f, Overflow: math.IsInf(f, 0)}
}

// StringLit is a decoded Python string literal.
type StringLit struct {
	Value string
	Bytes bool
	// FString is set for an f-string, which Python's ast does not treat as a constant.
	FString bool
}

// DecodeString decodes one string token (prefix, quotes and escapes).
func DecodeString(tok string) (StringLit, error) {
	i := 0
	for i < len(tok) && tok[i] != '\'' && tok[i] != '"' {
		i++
	}
	if i == len(tok) {
		return StringLit{}, fmt.Errorf("not a string literal: %s", tok)
	}
	prefix := tok[:i]
	if i > 0 {
		prefix = strings.ToLower(prefix)
	}
	body := tok[i:]
	if q := body[0]; len(body) >= 6 && body[1] == q && body[2] == q {
		body = body[3 : len(body)-3]
	} else {
		body = body[1 : len(body)-1]
	}
	lit := StringLit{Bytes: strings.Contains(prefix, "b"), FString: strings.Contains(prefix, "f")}
	if lit.Bytes {
		for j := 0; j < len(body); j++ {
			if body[j] >= utf8.RuneSelf {
				return StringLit{}, errors.New("bytes can only contain ASCII literal characters")
			}
		}
	}
	if strings.Contains(prefix, "r") {
		lit.Value = body
		return lit, nil
	}
	v, err := unescape(body, lit.Bytes)
	if err != nil {
		return StringLit{}, err
	}
	lit.Value = v
	return lit, nil
}

func unescape(s string, bytesLit bool) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		e := s[i]
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
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
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 32)
			writeCode(&b, rune(v), bytesLit)
			i = j - 1
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if e != 'x' && bytesLit {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			if i+1+n > len(s) {
				return "", fmt.Errorf("truncated \\%cXX escape", e)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", fmt.Errorf("invalid \\%c escape", e)
			}
			writeCode(&b, rune(v), bytesLit)
			i += n
		case 'N':
			if bytesLit {
				b.WriteString(`\N`)
				continue
			}
			end := strings.IndexByte(s[i:], '}')
			if !strings.HasPrefix(s[i:], "N{") || end < 2 {
				return "", errors.New("malformed \\N character escape")
			}
			r, ok := lookupName(s[i+2 : i+end])
			if !ok {
				return "", errors.New("unknown Unicode character name")
			}
			b.WriteRune(r)
			i += end
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}

func writeCode(b *strings.Builder, r rune, bytesLit bool) {
	if bytesLit {
		b.WriteByte(byte(r))
		return
	}
	b.WriteRune(r)
}
