package pysource

import (
	"strings"
	"testing"
)

// TestKeywordTable checks that every name with a code has a slot of its own
// in keywordTable and is found there, by keywordCode and by the lexer (at
// the end of a source and inside one), and that names one byte off are not.
func TestKeywordTable(t *testing.T) {
	for code, kw := range keywords {
		if kw == "" {
			continue
		}
		if got := keywordCode(kw); got != byte(code) {
			t.Errorf("keywordCode(%q): wanted %d, got %d", kw, code, got)
		}
		for _, src := range []string{kw, kw + " + xxxxxxxxx", "x = " + kw} {
			if got := lexedCode(t, src, kw); got != byte(code) {
				t.Errorf("the lexer's code of %q in %q: wanted %d, got %d", kw, src, code, got)
			}
		}
		for _, near := range []string{kw + "x", "x" + kw, kw[:len(kw)-1], strings.ToUpper(kw), kw[:len(kw)-1] + "_"} {
			if near == "" || near == "_" || near == strings.ToUpper(kw) && near == kw {
				continue
			}
			if got := keywordCode(near); got != kwNone0 {
				t.Errorf("keywordCode(%q): wanted %d, got %d", near, kwNone0, got)
			}
			for _, src := range []string{near, near + " + xxxxxxxxx"} {
				if got := lexedCode(t, src, near); got != kwNone0 {
					t.Errorf("the lexer's code of %q in %q: wanted %d, got %d", near, src, kwNone0, got)
				}
			}
		}
	}
}

// TestOneLetterNames checks the lexer's codes for the names of one letter,
// which it gives without the keyword look-up: only _ has one.
func TestOneLetterNames(t *testing.T) {
	for c := 0; c < 128; c++ {
		if !identByte[c] || isDigit(byte(c)) {
			continue
		}
		name := string(rune(c))
		for _, src := range []string{name, name + " + xxxxxxxxx", "x = " + name} {
			if got, want := lexedCode(t, src, name), keywordCode(name); got != want {
				t.Errorf("the lexer's code of %q in %q: wanted %d, got %d", name, src, want, got)
			}
		}
	}
}

// lexedCode is the code the lexer gives the Name token name in src.
func lexedCode(t *testing.T, src, name string) byte {
	t.Helper()
	code, found := byte(0), false
	scan(src, func(toks []tok) error {
		for _, tk := range toks {
			if tk.Kind == Name && src[tk.start:tk.end] == name {
				code, found = tk.code, true
			}
		}
		return nil
	}, nil)
	if !found {
		t.Fatalf("no Name token %q in %q", name, src)
	}
	return code
}
