package pyjson

import (
	"fmt"
	"strings"
	"unicode"
)

// UnicodeError is Python's UnicodeDecodeError of bytes.decode("utf-8").
type UnicodeError struct {
	Byte       byte
	Start, End int
	Reason     string
}

func (e *UnicodeError) Error() string {
	if e.End-e.Start == 1 {
		return fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", e.Byte, e.Start, e.Reason)
	}
	return fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s", e.Start, e.End-1, e.Reason)
}

// ReadText is Path.read_text(encoding="utf-8") of a file's bytes: the
// strict UTF-8 decode (with CPython's error) and the universal newlines
// ("\r\n" and "\r" read as "\n").
func ReadText(data []byte) ([]rune, error) {
	out := make([]rune, 0, len(data))
	for i := 0; i < len(data); {
		b := data[i]
		if b < 0x80 {
			if b == '\r' {
				if i+1 < len(data) && data[i+1] == '\n' {
					i++
				}
				b = '\n'
			}
			out = append(out, rune(b))
			i++
			continue
		}
		r, size, err := decodeUTF8(data, i)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		i += size
	}
	return out, nil
}

// decodeUTF8 is one code point of CPython's strict UTF-8 decoder at i.
func decodeUTF8(data []byte, i int) (rune, int, error) {
	b := data[i]
	var need int
	var lo, hi byte = 0x80, 0xbf
	switch {
	case b >= 0xc2 && b <= 0xdf:
		need = 1
	case b >= 0xe0 && b <= 0xef:
		need = 2
		if b == 0xe0 {
			lo = 0xa0
		} else if b == 0xed {
			hi = 0x9f
		}
	case b >= 0xf0 && b <= 0xf4:
		need = 3
		if b == 0xf0 {
			lo = 0x90
		} else if b == 0xf4 {
			hi = 0x8f
		}
	default:
		return 0, 0, &UnicodeError{Byte: b, Start: i, End: i + 1, Reason: "invalid start byte"}
	}
	r := rune(b) & (0x3f >> need)
	for k := 1; k <= need; k++ {
		if i+k >= len(data) {
			return 0, 0, &UnicodeError{Byte: b, Start: i, End: len(data), Reason: "unexpected end of data"}
		}
		c := data[i+k]
		if k == 1 && (c < lo || c > hi) || k > 1 && (c < 0x80 || c > 0xbf) {
			return 0, 0, &UnicodeError{Byte: b, Start: i, End: i + k, Reason: "invalid continuation byte"}
		}
		r = r<<6 | rune(c&0x3f)
	}
	return r, need + 1, nil
}

// AppendRune writes r as WTF-8: UTF-8, a surrogate in its three-byte form.
func AppendRune(b *strings.Builder, r rune) {
	if 0xd800 <= r && r <= 0xdfff {
		b.WriteByte(byte(0xe0 | r>>12))
		b.WriteByte(byte(0x80 | (r>>6)&0x3f))
		b.WriteByte(byte(0x80 | r&0x3f))
		return
	}
	b.WriteRune(r)
}

// Runes are the code points of a WTF-8 string (a byte that is neither
// UTF-8 nor a surrogate's form reads as U+FFFD).
func Runes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := nextRune(s, i)
		out = append(out, r)
		i += n
	}
	return out
}

func nextRune(s string, i int) (rune, int) {
	if i+2 < len(s) && s[i] == 0xed && s[i+1] >= 0xa0 && s[i+1] <= 0xbf && s[i+2] >= 0x80 && s[i+2] <= 0xbf {
		return 0xd000 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f), 3
	}
	r, n := decodeRune(s[i:])
	return r, n
}

// HasSurrogate says whether s holds a lone surrogate (a str Python cannot
// encode to UTF-8 with errors="strict").
func HasSurrogate(s string) bool {
	for _, r := range Runes(s) {
		if 0xd800 <= r && r <= 0xdfff {
			return true
		}
	}
	return false
}

// IsSpace is str.isspace of one code point (and what \s matches in a str
// pattern): Unicode White_Space plus the separators U+001C to U+001F.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || 0x1c <= r && r <= 0x1f
}

// Strip is str.strip().
func Strip(s string) string {
	r := Runes(s)
	i, j := 0, len(r)
	for i < j && IsSpace(r[i]) {
		i++
	}
	for j > i && IsSpace(r[j-1]) {
		j--
	}
	var b strings.Builder
	for _, c := range r[i:j] {
		AppendRune(&b, c)
	}
	return b.String()
}
