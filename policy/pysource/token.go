// Package pysource tokenizes Python source and reads the module's top-level
// call statements, enough to find register_*_ci(...) calls exactly as Python's
// own ast module would: strings of every kind, comments, line continuations,
// brackets, ';'-separated statements and indented blocks are all honoured, so
// a call inside a string, a function or a block never counts.
package pysource

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is the kind of a token.
type Kind int

// Token kinds, as in Python's tokenize module (comments and blank lines are dropped).
const (
	Name Kind = iota
	Number
	String
	Op
	Newline
	Indent
	Dedent
	EOF
)

// Token is one lexical token with its 1-based line.
type Token struct {
	Kind Kind
	Text string
	Line int
}

// SyntaxError is source that Python would refuse to parse.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// operators lists Python's operators, longest first so the longest match wins.
var operators = []string{
	"**=", "//=", ">>=", "<<=", "...", "!=", "%=", "&=", "**", "*=", "+=", "-=", "->", "//", "/=",
	":=", "<<", "<=", "==", ">=", ">>", "@=", "^=", "|=",
	"%", "&", "(", ")", "*", "+", ",", "-", ".", "/", ":", ";", "<", "=", ">", "@", "[", "]", "^", "{", "|", "}", "~",
}

// Python's tokenizer limits: deeper nesting is a syntax error there too, and
// the limits keep every scan here linear in the size of the file.
const (
	maxNesting = 200
	maxIndent  = 100
)

// operatorsByByte indexes operators by their first byte, longest first.
var operatorsByByte = func() (m [256][]string) {
	for _, o := range operators {
		m[o[0]] = append(m[o[0]], o)
	}
	return m
}()

var closerOf = map[byte]byte{'(': ')', '[': ']', '{': '}'}

type lexer struct {
	src    string
	pos    int
	line   int
	toks   []Token
	opens  []Token // open brackets
	indent []int
	onLine func([]Token) error
}

// Normalize turns the source into the text Python reads: universal newlines
// ("\r\n" and "\r" become "\n"), as open(path, "r") does.
func Normalize(src string) string {
	if !strings.Contains(src, "\r") {
		return src
	}
	src = strings.ReplaceAll(src, "\r\n", "\n")
	return strings.ReplaceAll(src, "\r", "\n")
}

// Scan tokenizes normalized Python source (comments, blank lines and newlines
// inside brackets dropped; INDENT and DEDENT mark blocks), handing the tokens
// to onLine one logical line at a time (any INDENT and DEDENT tokens first,
// NEWLINE last; the final call ends with EOF). The slice is reused after
// onLine returns, so a large file never holds all its tokens at once.
func Scan(src string, onLine func([]Token) error) error {
	if i := strings.IndexByte(src, 0); i >= 0 {
		return &SyntaxError{Line: 1 + strings.Count(src[:i], "\n"), Msg: "source code cannot contain null bytes"}
	}
	if !utf8.ValidString(src) {
		return &SyntaxError{Line: 1, Msg: "source is not valid UTF-8"}
	}
	src = strings.TrimPrefix(src, "\ufeff")
	lx := &lexer{src: src, line: 1, indent: []int{0}, onLine: onLine, toks: make([]Token, 0, 64)}
	if err := lx.run(); err != nil {
		return err
	}
	return lx.flush()
}

// lineOpen reports a logical line with tokens that no NEWLINE has ended yet.
func (lx *lexer) lineOpen() bool {
	n := len(lx.toks)
	return n > 0 && lx.toks[n-1].Kind != Newline && lx.toks[n-1].Kind != Indent && lx.toks[n-1].Kind != Dedent
}

// flush hands the current logical line to onLine and empties the buffer.
func (lx *lexer) flush() error {
	err := lx.onLine(lx.toks)
	lx.toks = lx.toks[:0]
	return err
}

func (lx *lexer) errf(format string, args ...any) error {
	return &SyntaxError{Line: lx.line, Msg: fmt.Sprintf(format, args...)}
}

func (lx *lexer) emit(k Kind, start int) {
	lx.toks = append(lx.toks, Token{Kind: k, Text: lx.src[start:lx.pos], Line: lx.line})
}

func (lx *lexer) newline() { lx.line++ }

func (lx *lexer) run() error {
	atLineStart := true
	for {
		if atLineStart && len(lx.opens) == 0 {
			atLineStart = false
			blank, err := lx.indentation()
			if err != nil {
				return err
			}
			if blank {
				if lx.pos >= len(lx.src) {
					break
				}
				lx.pos++ // the '\n'
				lx.newline()
				atLineStart = true
				continue
			}
		}
		if lx.pos >= len(lx.src) {
			break
		}
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			lx.pos++
		case c == '#':
			lx.skipComment()
		case c == '\\':
			if lx.pos+1 >= len(lx.src) {
				return lx.errf("unexpected EOF after line continuation character")
			}
			if lx.src[lx.pos+1] != '\n' {
				return lx.errf("unexpected character after line continuation character")
			}
			lx.pos += 2
			lx.newline()
		case c == '\n':
			if len(lx.opens) == 0 {
				// A logical line with no token (e.g. a lone continuation) ends nothing.
				if lx.lineOpen() {
					lx.emit(Newline, lx.pos)
					if err := lx.flush(); err != nil {
						return err
					}
				}
				atLineStart = true
			}
			lx.pos++
			lx.newline()
		case c == '"' || c == '\'':
			if err := lx.str(lx.pos); err != nil {
				return err
			}
		case isDigit(c) || (c == '.' && lx.pos+1 < len(lx.src) && isDigit(lx.src[lx.pos+1])):
			if err := lx.number(); err != nil {
				return err
			}
		case c >= utf8.RuneSelf || c == '_' || isASCIILetter(c):
			if err := lx.name(); err != nil {
				return err
			}
		default:
			if err := lx.op(); err != nil {
				return err
			}
		}
	}
	if len(lx.opens) > 0 {
		o := lx.opens[len(lx.opens)-1]
		return &SyntaxError{Line: o.Line, Msg: fmt.Sprintf("'%s' was never closed", o.Text)}
	}
	if lx.lineOpen() {
		lx.toks = append(lx.toks, Token{Kind: Newline, Line: lx.line})
	}
	for len(lx.indent) > 1 {
		lx.indent = lx.indent[:len(lx.indent)-1]
		lx.toks = append(lx.toks, Token{Kind: Dedent, Line: lx.line})
	}
	lx.toks = append(lx.toks, Token{Kind: EOF, Line: lx.line})
	return nil
}

// indentation reads the indentation of a new logical line and emits INDENT or
// DEDENT tokens. It reports a blank (or comment-only) line, which has none.
func (lx *lexer) indentation() (blank bool, err error) {
	col := 0
	for lx.pos < len(lx.src) {
		switch lx.src[lx.pos] {
		case ' ':
			col++
		case '\t':
			col = (col/8 + 1) * 8
		case '\f':
			col = 0
		default:
			goto done
		}
		lx.pos++
	}
done:
	if lx.pos >= len(lx.src) {
		return true, nil
	}
	switch lx.src[lx.pos] {
	case '#':
		lx.skipComment()
		return true, nil
	case '\n':
		return true, nil
	case '\\':
		// A continuation right after the indentation: Python treats the next
		// physical line as the rest of this one; the indentation counts.
	}
	top := lx.indent[len(lx.indent)-1]
	switch {
	case col > top:
		if len(lx.indent) >= maxIndent {
			return false, lx.errf("too many levels of indentation")
		}
		lx.indent = append(lx.indent, col)
		lx.toks = append(lx.toks, Token{Kind: Indent, Line: lx.line})
	case col < top:
		for col < lx.indent[len(lx.indent)-1] {
			lx.indent = lx.indent[:len(lx.indent)-1]
			lx.toks = append(lx.toks, Token{Kind: Dedent, Line: lx.line})
		}
		if col != lx.indent[len(lx.indent)-1] {
			return false, lx.errf("unindent does not match any outer indentation level")
		}
	}
	return false, nil
}

// skipComment moves to the end of the line.
func (lx *lexer) skipComment() {
	if j := strings.IndexByte(lx.src[lx.pos:], '\n'); j >= 0 {
		lx.pos += j
	} else {
		lx.pos = len(lx.src)
	}
}

func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isIdentStart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r)
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) ||
		unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Other_ID_Continue, r)
}

// stringPrefixes are the prefixes Python accepts before a string's quote, lowercased.
var stringPrefixes = map[string]bool{"r": true, "u": true, "b": true, "br": true, "rb": true, "f": true, "fr": true, "rf": true}

func (lx *lexer) name() error {
	start := lx.pos
	r, size := utf8.DecodeRuneInString(lx.src[lx.pos:])
	if !isIdentStart(r) {
		return lx.errf("invalid character '%c' (U+%04X)", r, r)
	}
	lx.pos += size
	for lx.pos < len(lx.src) {
		if c := lx.src[lx.pos]; c < utf8.RuneSelf {
			if c == '_' || isASCIILetter(c) || isDigit(c) {
				lx.pos++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(lx.src[lx.pos:])
		if !isIdentPart(r) {
			break
		}
		lx.pos += size
	}
	if lx.pos < len(lx.src) && (lx.src[lx.pos] == '"' || lx.src[lx.pos] == '\'') &&
		stringPrefixes[strings.ToLower(lx.src[start:lx.pos])] {
		return lx.str(start)
	}
	lx.emit(Name, start)
	return nil
}

// str scans a string literal whose prefix starts at start and whose quote is at lx.pos.
func (lx *lexer) str(start int) error {
	q := lx.src[lx.pos]
	startLine := lx.line
	closer := string([]byte{q, q, q})
	triple := strings.HasPrefix(lx.src[lx.pos:], closer)
	if triple {
		lx.pos += 3
	} else {
		lx.pos++
	}
	for {
		if lx.pos >= len(lx.src) {
			lx.line = startLine
			if triple {
				return lx.errf("unterminated triple-quoted string literal")
			}
			return lx.errf("unterminated string literal")
		}
		c := lx.src[lx.pos]
		switch {
		case c == '\\':
			// Even in a raw string a backslash keeps the next character
			// (a quote or a newline) inside the literal.
			lx.pos++
			if lx.pos < len(lx.src) {
				if lx.src[lx.pos] == '\n' {
					lx.pos++
					lx.newline()
				} else {
					lx.pos++
				}
			}
		case c == '\n':
			if !triple {
				lx.line = startLine
				return lx.errf("unterminated string literal")
			}
			lx.pos++
			lx.newline()
		case c == q && (!triple || strings.HasPrefix(lx.src[lx.pos:], closer)):
			if triple {
				lx.pos += 3
			} else {
				lx.pos++
			}
			lx.toks = append(lx.toks, Token{Kind: String, Text: lx.src[start:lx.pos], Line: startLine})
			return nil
		default:
			// Skip this character and the plain ones after it in one step.
			lx.pos++
			j := strings.IndexAny(lx.src[lx.pos:], closerSet[q])
			if j < 0 {
				lx.pos = len(lx.src)
			} else {
				lx.pos += j
			}
		}
	}
}

// closerSet are the characters that end a run of plain string content.
var closerSet = map[byte]string{'"': "\\\n\"", '\'': "\\\n'"}

func (lx *lexer) number() error {
	start := lx.pos
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case isDigit(c) || isASCIILetter(c) || c == '_' || c == '.':
			lx.pos++
		case (c == '+' || c == '-') && lx.pos > start && (lx.src[lx.pos-1]|0x20) == 'e' && !isHexPrefixed(lx.src[start:lx.pos]):
			lx.pos++
		default:
			goto done
		}
	}
done:
	text := lx.src[start:lx.pos]
	if !allDigits(text) && !validNumber(text) {
		return lx.errf("invalid number literal %q", text)
	}
	lx.emit(Number, start)
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) == 1 || s[0] != '0' // a leading zero needs the full check
}

func validNumber(s string) bool {
	_, err := ParseNumber(s)
	return err == nil
}

func isHexPrefixed(s string) bool {
	return len(s) >= 2 && s[0] == '0' && (s[1]|0x20) == 'x'
}

func (lx *lexer) op() error {
	rest := lx.src[lx.pos:]
	for _, o := range operatorsByByte[rest[0]] {
		if strings.HasPrefix(rest, o) {
			start := lx.pos
			lx.pos += len(o)
			lx.emit(Op, start)
			tok := lx.toks[len(lx.toks)-1]
			switch o {
			case "(", "[", "{":
				if len(lx.opens) >= maxNesting {
					return lx.errf("too many nested parentheses")
				}
				lx.opens = append(lx.opens, tok)
			case ")", "]", "}":
				if len(lx.opens) == 0 {
					return lx.errf("unmatched '%s'", o)
				}
				open := lx.opens[len(lx.opens)-1]
				if closerOf[open.Text[0]] != o[0] {
					return lx.errf("closing parenthesis '%s' does not match opening parenthesis '%s'", o, open.Text)
				}
				lx.opens = lx.opens[:len(lx.opens)-1]
			}
			return nil
		}
	}
	r, _ := utf8.DecodeRuneInString(lx.src[lx.pos:])
	return lx.errf("invalid character '%c' (U+%04X)", r, r)
}
