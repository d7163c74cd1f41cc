package pysource

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Identifiers follow Unicode's XID_Start and XID_Continue, as CPython's
// tokenizer checks them, and are NFKC-normalised, as CPython's parser stores
// them: a fullwidth ｒegister_cpu_ci is the name register_cpu_ci. Keywords are
// matched before normalisation (CPython compares the bytes), so a fullwidth
// ｉｆ is the identifier "if", not the keyword.
//
// CPython 3.11 uses Unicode 14.0 and Go's tables are Unicode 15.0: a character
// first assigned in 15.0 is a letter here and an invalid character there. For
// every character of Unicode 14.0 the two agree (checked against
// str.isidentifier over all code points).

// isIDStart is Unicode's ID_Start: letters, letter numbers and
// Other_ID_Start, minus pattern syntax and pattern white space.
func isIDStart(r rune) bool {
	if unicode.Is(unicode.Pattern_Syntax, r) || unicode.Is(unicode.Pattern_White_Space, r) {
		return false
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r)
}

// isIDContinue is Unicode's ID_Continue.
func isIDContinue(r rune) bool {
	if unicode.Is(unicode.Pattern_Syntax, r) || unicode.Is(unicode.Pattern_White_Space, r) {
		return false
	}
	return isIDStart(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue)
}

// isXIDStart is ID_Start closed under NFKC: the normal form of the character
// must itself start an identifier.
func isXIDStart(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || isASCIILetter(byte(r))
	}
	if !isIDStart(r) {
		return false
	}
	for i, c := range norm.NFKC.String(string(r)) {
		if i == 0 && !isIDStart(c) || i > 0 && !isIDContinue(c) {
			return false
		}
	}
	return true
}

// isXIDContinue is ID_Continue closed under NFKC.
func isXIDContinue(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || isASCIILetter(byte(r)) || isDigit(byte(r))
	}
	if !isIDContinue(r) {
		return false
	}
	for _, c := range norm.NFKC.String(string(r)) {
		if !isIDContinue(c) {
			return false
		}
	}
	return true
}

// Ident returns the identifier a Name token stands for: its text, NFKC-normalised.
func (t Token) Ident() string {
	for i := 0; i < len(t.Text); i++ {
		if t.Text[i] >= utf8.RuneSelf {
			return norm.NFKC.String(t.Text)
		}
	}
	return t.Text
}

// isPrintable is Python's str.isprintable for one character: not a control,
// format, surrogate, private-use, unassigned or separator character, except
// the ASCII space.
func isPrintable(r rune) bool { return unicode.IsPrint(r) }

// invalidCharacter is CPython's message for a character that cannot start a token.
func invalidCharacter(r rune) string {
	if isPrintable(r) {
		return fmt.Sprintf("invalid character '%c' (U+%04X)", r, r)
	}
	return fmt.Sprintf("invalid non-printable character U+%04X", r)
}
