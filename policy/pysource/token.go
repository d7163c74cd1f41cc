// Package pysource reads Python source as CPython 3.11's ast.parse does: it
// refuses what ast.parse refuses (the tokenizer's errors, the grammar of
// every statement and expression, string and f-string literals) and reads the
// module's top-level call statements, enough to find register_*_ci(...) calls
// exactly as Python's own ast module would: a call inside a string, a
// function or a block never counts. docs/python.md lists what is checked.
package pysource

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Kind is the kind of a token.
type Kind uint8

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
	// op codes an operator for quick comparison: the character for a
	// one-character operator, 0x80 and up for the longer ones.
	op byte
	// start is the byte offset of Text in the normalized source (it fits
	// the padding after op, so a Token is no bigger for it).
	start int32
	Text  string
	Line  int
}

// Offset is the byte offset of the token in the source as Normalize gives it.
func (t Token) Offset() int { return int(t.start) }

// tok is a token as the lexer and the grammar check see it: byte offsets
// into the source instead of a substring, so a token holds no pointer. A
// file's tokens are then plain data the garbage collector never scans and
// appending one costs no write barrier; the text is src[start:end], wanted
// only for literals and the few statements handed on as []Token.
type tok struct {
	start, end int32
	line       int32
	Kind       Kind
	// code is an operator's code (see codes.go and opAt) or a Name's keyword code
	// (kwNone0 for a plain identifier, see keywordCode).
	code byte
}

// Line is the token's 1-based line.
func (t tok) Line() int { return int(t.line) }

// token is t as an exported Token with its text in src.
func (t tok) token(src string) Token {
	op := byte(0)
	if t.Kind == Op {
		op = t.code
	}
	return Token{Kind: t.Kind, op: op, start: t.start, Text: src[t.start:t.end], Line: int(t.line)}
}

// maxSource bounds the source one scan reads: offsets are 32 bits. Test
// files are at most 4 MiB (fsinput), so only a caller feeding a huge string
// meets it.
const maxSource = 1<<31 - 1

// SyntaxError is source that Python would refuse to parse.
type SyntaxError struct {
	// Line is the 1-based line CPython reports.
	Line int
	// Msg is CPython's message.
	Msg string
	// class decides which of two errors CPython reports (see scan).
	class errClass
	// bracketLine is the line of the bracket an unclosedErr leaves open.
	bracketLine int
}

// errClass is how an error ranks when there are several: CPython reports
// the parser's error unless, tokenizing the rest of the file, it meets a
// tokenizer error it raises at once; an unexpected indent is always final.
type errClass uint8

const (
	parseErr    errClass = iota // a parser error: a later tokenizer error replaces it
	finalErr                    // unexpected indent: nothing replaces it
	tokErr                      // a tokenizer error CPython raises at once
	quietTokErr                 // a tokenizer error CPython reports only when the parser asks for that token
	unclosedErr                 // the end of the file inside brackets
)

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Python's tokenizer limits: deeper nesting is a syntax error there too, and
// the limits keep every scan here linear in the size of the file.
const (
	maxNesting = 200
	maxIndent  = 100
)

// charClass sorts bytes for the lexer's dispatch: one table look-up per
// token instead of a chain of comparisons.
var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c == ' ' || c == '\t' || c == '\f':
			t[c] = cSpace
		case c == '\n':
			t[c] = cNewline
		case c == '#':
			t[c] = cComment
		case c == '\\':
			t[c] = cBackslash
		case c == '"' || c == '\'':
			t[c] = cQuote
		case c >= '0' && c <= '9':
			t[c] = cDigit
		case c == '.':
			t[c] = cDot
		case c >= utf8.RuneSelf:
			t[c] = cNonASCII
		case c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z':
			t[c] = cName
		case c < ' ' || c == 0x7f:
			t[c] = cControl
		case c == '(' || c == '[' || c == '{':
			t[c] = cOpen
		case c == ')' || c == ']' || c == '}':
			t[c] = cClose
		case c == ',' || c == ';' || c == '~':
			t[c] = cAlone
		}
	}
	return t
}()

// Byte classes of charClass; cOther is an operator or a character that
// starts no token.
const (
	cOther uint8 = iota
	cSpace
	cNewline
	cComment
	cBackslash
	cQuote
	// cDigit to cNonASCII are the bytes that may continue a number's
	// text (a letter or a '.' after digits): one range test.
	cDigit
	cDot
	cName     // an ASCII letter or '_'
	cNonASCII // the start of a non-ASCII character: a name's, or an error
	cControl
	cOpen  // ( [ {
	cClose // ) ] }
	cAlone // , ; ~: never the start of a longer operator
)

// stopSingle and stopDouble mark the bytes a '- or "-quoted string's scan
// stops at: its quote, a backslash and a newline.
var stopSingle, stopDouble = stringStops('\''), stringStops('"')

func stringStops(q byte) (t [256]bool) {
	t[q], t['\\'], t['\n'] = true, true, true
	return t
}

// identByte marks the ASCII bytes an identifier continues with.
var identByte = func() (t [256]bool) {
	for c := 0; c < utf8.RuneSelf; c++ {
		t[c] = c == '_' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
	}
	return t
}()

// closerOf is the bracket that closes an opening one.
func closerOf(open byte) byte {
	switch open {
	case '(':
		return ')'
	case '[':
		return ']'
	}
	return '}'
}

type lexer struct {
	src         string
	pos         int
	line        int
	atLineStart bool
	// lineErr is set when the error run returns came from onLine.
	lineErr bool
	toks    []tok
	opens   []tok // open brackets
	indent  []int
	// altIndent is each level's indentation with a tab counting as one
	// column: CPython compares both measures to catch inconsistent tabs.
	altIndent []int
	// plainTop is the top level's column when both measures agree on it
	// (spaces only), else -1: indentation's one test for a common line.
	plainTop int
	// Backing arrays for the common depths, so a file costs no growth.
	indentBuf, altIndentBuf [8]int
	// opensBuf backs opens at every depth (the tokenizer allows no more).
	opensBuf [maxNesting]tok
	// onLine takes each logical line; nil drops them (the scan after a
	// parser error only looks for tokenizer errors).
	onLine func([]tok) error
	// module, when set, takes the lines instead of onLine: a direct call,
	// where the method value m.line cost a wrapper's call per line.
	module *moduleReader
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
//
// A UTF-8 byte order mark is not skipped: Miles reads each file with
// open(path).read(), which keeps it, and CPython refuses it in a str.
func Scan(src string, onLine func([]Token) error) error {
	var line []Token
	return scan(src, func(toks []tok) error {
		line = line[:0]
		for _, t := range toks {
			line = append(line, t.token(src))
		}
		return onLine(line)
	}, nil)
}

// ScanTopLevel is Scan for the logical lines at the module's top level (no
// block open), each handed to fn without its INDENT and DEDENT tokens: where
// the `NAME = value` declarations and `def` statements of a checkout's
// scripts are read.
func ScanTopLevel(src string, fn func(toks []Token)) error {
	depth := 0
	return Scan(src, func(toks []Token) error {
		for _, t := range toks {
			switch t.Kind {
			case Indent:
				depth++
			case Dedent:
				depth--
			}
		}
		if depth == 0 {
			fn(slices.DeleteFunc(slices.Clone(toks), func(t Token) bool {
				return t.Kind == Indent || t.Kind == Dedent
			}))
		}
		return nil
	})
}

// scan is Scan reporting the error CPython would. onPartial, if set, is
// given the tokens of a logical line cut short by a tokenizer error, and
// returns the error to report (the parser may have failed before that token).
// A parser error is then checked against the rest of the source: a tokenizer
// error CPython raises at once replaces it, and an unclosed bracket does when
// it opened on an earlier line.
func scan(src string, onLine func([]tok) error, onPartial func([]tok, *SyntaxError) *SyntaxError) error {
	return scanInto(src, nil, onLine, onPartial)
}

// scanInto is scan handing the lines to module, when it is set, instead of onLine.
func scanInto(src string, module *moduleReader, onLine func([]tok) error, onPartial func([]tok, *SyntaxError) *SyntaxError) error {
	if len(src) > maxSource {
		return &SyntaxError{Line: 1, Msg: "source too large to parse", class: tokErr}
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		return &SyntaxError{Line: 1 + strings.Count(src[:i], "\n"), Msg: "source code string cannot contain null bytes", class: tokErr}
	}
	if !utf8.ValidString(src) {
		return &SyntaxError{Line: 1, Msg: "source is not valid UTF-8 (Python's open() cannot read it)", class: tokErr}
	}
	lx := lexers.Get().(*lexer)
	defer lx.release()
	*lx = lexer{src: src, line: 1, atLineStart: true, onLine: onLine, module: module, toks: lx.toks[:0]}
	lx.indent, lx.altIndent, lx.opens = lx.indentBuf[:1], lx.altIndentBuf[:1], lx.opensBuf[:0]
	err := lx.run()
	if err == nil {
		err = lx.flush()
	}
	se, ok := err.(*SyntaxError)
	if !ok {
		return err
	}
	if !lx.lineErr && onPartial != nil {
		se = onPartial(lx.toks, se)
	}
	if se.class != parseErr {
		return se
	}
	return lx.override(se)
}

// lexers keeps lexers and their token buffers between scans: a planner
// reads hundreds of files, and a buffer grown to one file's longest logical
// line serves the next without growing again.
var lexers = sync.Pool{New: func() any { return &lexer{toks: make([]tok, 0, 256)} }}

// release returns the lexer to the pool, dropping what refers to the source
// and the caller. No token outlives the scan: onLine must copy what it keeps.
func (lx *lexer) release() {
	if cap(lx.toks) > 1<<16 {
		return // a huge line: let the collector have its buffer
	}
	toks := lx.toks[:0]
	*lx = lexer{toks: toks}
	lexers.Put(lx)
}

// override tokenizes the rest of the source after a parser error, as CPython
// does, and returns the error CPython reports.
func (lx *lexer) override(first *SyntaxError) *SyntaxError {
	lx.onLine, lx.module = nil, nil
	lx.toks = lx.toks[:0]
	for {
		err := lx.run()
		if err == nil {
			return first
		}
		se := err.(*SyntaxError)
		switch se.class {
		case tokErr:
			return se
		case unclosedErr:
			if first.Line > se.bracketLine {
				return se
			}
			return first
		case parseErr:
			continue // a character the parser would refuse; the tokenizer goes on
		}
		return first // the tokenizer stops at this one without raising it
	}
}

// lineOpen reports a logical line with tokens that no NEWLINE has ended yet.
func (lx *lexer) lineOpen() bool {
	n := len(lx.toks)
	return n > 0 && lx.toks[n-1].Kind != Newline && lx.toks[n-1].Kind != Indent && lx.toks[n-1].Kind != Dedent
}

// flush hands the current logical line to onLine and empties the buffer.
func (lx *lexer) flush() error {
	var err error
	if lx.module != nil {
		err = lx.module.line(lx.toks)
	} else if lx.onLine != nil {
		err = lx.onLine(lx.toks)
	}
	lx.toks = lx.toks[:0]
	lx.lineErr = err != nil
	return err
}

// errf is a tokenizer error CPython raises at once.
func (lx *lexer) errf(format string, args ...any) error {
	return &SyntaxError{Line: lx.line, Msg: fmt.Sprintf(format, args...), class: tokErr}
}

// quietf is a tokenizer error CPython reports only when the parser asks for
// the token (an indentation error, a bad line continuation, the end of the file).
func (lx *lexer) quietf(format string, args ...any) error {
	return &SyntaxError{Line: lx.line, Msg: fmt.Sprintf(format, args...), class: quietTokErr}
}

func (lx *lexer) emit(k Kind, start int) {
	lx.toks = append(lx.toks, tok{start: int32(start), end: int32(lx.pos), line: int32(lx.line), Kind: k})
}

// mark emits a token without text (NEWLINE, INDENT, DEDENT, EOF) on line.
func (lx *lexer) mark(k Kind, line int) {
	lx.toks = append(lx.toks, tok{start: int32(lx.pos), end: int32(lx.pos), line: int32(line), Kind: k})
}

func (lx *lexer) newline() { lx.line++ }

// endLine reads the newline at the position outside brackets: it ends the
// logical line, handed on with its NEWLINE (a line with no token, e.g. a lone
// continuation, ends nothing), and the next line starts.
func (lx *lexer) endLine() error {
	if lx.lineOpen() {
		lx.emit(Newline, lx.pos)
		if err := lx.flush(); err != nil {
			return err
		}
	}
	lx.atLineStart = true
	lx.pos++
	lx.newline()
	return nil
}

// run is the lexer: it reads tokens from lx.pos to the end of the source
// (or to an error), one dispatch on the byte class a token, and hands on
// each logical line as it ends.
func (lx *lexer) run() error {
	src := lx.src
	for {
		if lx.atLineStart && len(lx.opens) == 0 {
			lx.atLineStart = false
			blank, err := lx.indentation()
			if err != nil {
				return err
			}
			if blank {
				if lx.pos >= len(src) {
					break
				}
				lx.pos++ // the '\n'
				lx.newline()
				lx.atLineStart = true
				continue
			}
		}
		pos := lx.pos
		if pos >= len(src) {
			break
		}
		var err error
		switch c := src[pos]; charClass[c] {
		case cSpace:
			lx.pos++
		case cName:
			// An ASCII name, read here; name reads the others and a
			// string's prefix.
			end := pos + 1
			for end < len(src) && identByte[src[end]] {
				end++
			}
			if end < len(src) && (src[end] >= utf8.RuneSelf || src[end] == '"' || src[end] == '\'') {
				err = lx.name()
				break
			}
			lx.pos = end
			lx.toks = append(lx.toks, tok{start: int32(pos), end: int32(end), line: int32(lx.line), Kind: Name, code: keywordCode(src[pos:end])})
		case cNonASCII:
			err = lx.name()
		case cDigit:
			err = lx.number()
		case cDot:
			if pos+1 < len(src) && isDigit(src[pos+1]) {
				err = lx.number()
			} else {
				err = lx.op()
			}
		case cQuote:
			err = lx.str(pos)
		case cBackslash:
			err = lx.continuation()
		case cComment:
			lx.skipComment()
		case cNewline:
			if len(lx.opens) == 0 {
				err = lx.endLine()
			} else {
				lx.pos++ // inside brackets: no logical line ends
				lx.newline()
			}
		case cOpen, cClose, cAlone:
			// Brackets and the operators that are one character whatever
			// follows, here rather than in op: they are most operators.
			t := tok{start: int32(pos), end: int32(pos + 1), line: int32(lx.line), Kind: Op, code: c}
			switch charClass[c] {
			case cOpen:
				if len(lx.opens) >= maxNesting {
					return lx.errf("too many nested parentheses")
				}
				lx.opens = append(lx.opens, t)
			case cClose:
				if n := len(lx.opens); n == 0 || closerOf(lx.opens[n-1].code) != c {
					return lx.closeError(c)
				}
				lx.opens = lx.opens[:len(lx.opens)-1]
			}
			lx.toks = append(lx.toks, t)
			lx.pos = pos + 1
		case cControl:
			err = lx.errf("%s", invalidCharacter(rune(c)))
		default:
			err = lx.op()
		}
		if err != nil {
			return err
		}
	}
	if len(lx.opens) > 0 {
		o := lx.opens[len(lx.opens)-1]
		return &SyntaxError{Line: o.Line(), Msg: fmt.Sprintf("'%c' was never closed", lx.src[o.start]), class: unclosedErr, bracketLine: o.Line()}
	}
	if lx.lineOpen() {
		lx.mark(Newline, lx.line)
	}
	end := lx.line
	if lx.line > 1 && strings.HasSuffix(lx.src, "\n") {
		end-- // CPython counts no line after the last newline
	}
	for len(lx.indent) > 1 {
		lx.indent = lx.indent[:len(lx.indent)-1]
		lx.mark(Dedent, end)
	}
	lx.mark(EOF, end)
	return nil
}

// indentation reads the indentation of a new logical line and emits INDENT or
// DEDENT tokens. It reports a blank (or comment-only) line, which has none.
func (lx *lexer) indentation() (blank bool, err error) {
	col, altcol := 0, 0 // a tab goes to the next multiple of 8, and of 1
	// A line continuation inside the indentation: as in CPython, the column
	// of the first backslash (if not 0) is the line's indentation.
	contCol := 0
	src, i := lx.src, lx.pos
	// Most indentation is spaces only: count them first, and leave tabs,
	// form feeds and continuations to the loop below.
	for i < len(src) && src[i] == ' ' {
		i++
	}
	col, altcol = i-lx.pos, i-lx.pos
	// The common line: spaces only, as deep as the line before, and then
	// a token. The code below finds the same.
	if i < len(src) && !indentGoesOn[src[i]] && col == lx.plainTop {
		lx.pos = i
		return false, nil
	}
	for i < len(src) {
		switch src[i] {
		case ' ':
			col++
			altcol++
		case '\t':
			col = (col/8 + 1) * 8
			altcol++
		case '\f':
			col, altcol = 0, 0
		case '\\':
			if contCol == 0 {
				contCol = col
			}
			lx.pos = i
			if err := lx.continuation(); err != nil {
				return false, err
			}
			i = lx.pos
			continue
		default:
			goto done
		}
		i++
	}
done:
	lx.pos = i
	if lx.pos >= len(lx.src) {
		return true, nil
	}
	switch lx.src[lx.pos] {
	case '#':
		lx.skipComment()
		return true, nil
	case '\n':
		return true, nil
	}
	if contCol != 0 {
		col, altcol = contCol, contCol
	}
	// Both measures must order the levels the same way, else the meaning
	// depends on the tab size: CPython's TabError.
	const tabError = "inconsistent use of tabs and spaces in indentation"
	top, altTop := lx.indent[len(lx.indent)-1], lx.altIndent[len(lx.altIndent)-1]
	switch {
	case col == top:
		if altcol != altTop {
			return false, lx.quietf(tabError)
		}
	case col > top:
		if len(lx.indent) >= maxIndent {
			return false, lx.quietf("too many levels of indentation")
		}
		if altcol <= altTop {
			return false, lx.quietf(tabError)
		}
		lx.indent = append(lx.indent, col)
		lx.altIndent = append(lx.altIndent, altcol)
		lx.plainTop = -1 // setPlainTop, from the level just pushed
		if col == altcol {
			lx.plainTop = col
		}
		lx.mark(Indent, lx.line)
	default:
		marked := len(lx.toks)
		for col < lx.indent[len(lx.indent)-1] {
			lx.indent = lx.indent[:len(lx.indent)-1]
			lx.altIndent = lx.altIndent[:len(lx.altIndent)-1]
			lx.mark(Dedent, lx.line)
		}
		// Before the checks below: after their errors the scan may go on
		// (see override) with the levels as they are now.
		lx.setPlainTop()
		// CPython checks the new level before it hands on any DEDENT: the
		// blocks the line would close are not closed (a try inside a try
		// is not "expected 'except' or 'finally' block" here).
		if col != lx.indent[len(lx.indent)-1] {
			lx.toks = lx.toks[:marked]
			return false, lx.quietf("unindent does not match any outer indentation level")
		}
		if altcol != lx.altIndent[len(lx.altIndent)-1] {
			lx.toks = lx.toks[:marked]
			return false, lx.quietf(tabError)
		}
	}
	return false, nil
}

// setPlainTop sets plainTop for the levels as they are: it is called
// wherever they change.
func (lx *lexer) setPlainTop() {
	lx.plainTop = -1
	if top := lx.indent[len(lx.indent)-1]; top == lx.altIndent[len(lx.altIndent)-1] {
		lx.plainTop = top
	}
}

// indentGoesOn marks the bytes after leading spaces that indentation reads
// on: more indentation (a tab, a form feed, a continuation), a comment or
// the end of a blank line.
var indentGoesOn = func() (t [256]bool) {
	t[' '], t['\t'], t['\f'], t['\\'], t['#'], t['\n'] = true, true, true, true, true, true
	return t
}()

// continuation reads a backslash that must end its physical line: the
// logical line goes on, and may not end the file there.
func (lx *lexer) continuation() error {
	if lx.pos+1 >= len(lx.src) {
		return lx.quietf("unexpected EOF while parsing")
	}
	if lx.src[lx.pos+1] != '\n' {
		return lx.quietf("unexpected character after line continuation character")
	}
	lx.pos += 2
	if lx.pos >= len(lx.src) {
		return lx.quietf("unexpected EOF while parsing") // on the backslash's line
	}
	lx.newline()
	return nil
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

// isStringPrefix reports the prefixes Python accepts before a string's
// quote, in any case: r u b f, br rb fr rf. A switch, not a map of the
// lowercased text: every f-string's prefix comes here.
func isStringPrefix(p string) bool {
	switch len(p) {
	case 1:
		switch p[0] | 0x20 {
		case 'r', 'u', 'b', 'f':
			return true
		}
	case 2:
		a, b := p[0]|0x20, p[1]|0x20
		return a == 'r' && (b == 'b' || b == 'f') || b == 'r' && (a == 'b' || a == 'f')
	}
	return false
}

// name scans an identifier (or a string prefix). Like CPython's tokenizer,
// it takes every ASCII letter, digit and '_' and every non-ASCII character,
// then refuses the first character that is not XID_Start (first) or
// XID_Continue (rest).
func (lx *lexer) name() error {
	src := lx.src
	start := lx.pos
	i := start
	for {
		for i < len(src) && identByte[src[i]] {
			i++
		}
		if i >= len(src) || src[i] < utf8.RuneSelf {
			break
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		if i == start && !isXIDStart(r) || i > start && !isXIDContinue(r) {
			lx.pos = i
			return lx.errf("%s", invalidCharacter(r))
		}
		i += size
	}
	lx.pos = i
	if i < len(src) && (src[i] == '"' || src[i] == '\'') && isStringPrefix(src[start:i]) {
		return lx.str(start)
	}
	lx.toks = append(lx.toks, tok{start: int32(start), end: int32(lx.pos), line: int32(lx.line), Kind: Name, code: keywordCode(lx.src[start:lx.pos])})
	return nil
}

// str scans a string literal whose prefix starts at start and whose quote is at lx.pos.
func (lx *lexer) str(start int) error {
	src := lx.src
	i := lx.pos
	q := src[i]
	startLine := lx.line
	triple := i+3 <= len(src) && src[i+1] == q && src[i+2] == q
	if triple {
		i += 3
	} else {
		i++
	}
	stop := &stopDouble
	if q == '\'' {
		stop = &stopSingle
	}
	code := byte(0) // strBackslash once a backslash is met
	for {
		for i < len(src) && !stop[src[i]] {
			i++
		}
		if i >= len(src) {
			lx.pos = i
			detected := lx.line
			if strings.HasSuffix(src, "\n") {
				detected-- // CPython counts no line after the last newline
			}
			lx.line = startLine
			if triple {
				return lx.errf("unterminated triple-quoted string literal (detected at line %d)", detected)
			}
			return lx.errf("unterminated string literal (detected at line %d)", detected)
		}
		switch src[i] {
		case '\\':
			// Even in a raw string a backslash keeps the next character
			// (a quote or a newline) inside the literal.
			code = strBackslash
			i++
			if i < len(src) {
				if src[i] == '\n' {
					lx.newline()
				}
				i++
			}
		case '\n':
			if !triple {
				lx.pos = i
				detected := lx.line
				lx.line = startLine
				return lx.errf("unterminated string literal (detected at line %d)", detected)
			}
			i++
			lx.newline()
		default: // the quote
			if !triple || i+3 <= len(src) && src[i+1] == q && src[i+2] == q {
				if triple {
					i += 3
				} else {
					i++
				}
				lx.pos = i
				lx.toks = append(lx.toks, tok{start: int32(start), end: int32(i), line: int32(startLine), Kind: String, code: code})
				return nil
			}
			i++
		}
	}
}

// number scans a number literal as CPython 3.11's tokenizer does, with its
// messages: digits with single '_' between them, a 0x/0o/0b prefix, a
// fraction, an exponent and a 'j'. A literal may be directly followed by one
// of the keywords and, else, for, if, in, is, not, or (CPython warns but
// accepts: 1if x else 2); any other letter right after it is an error.
func (lx *lexer) number() error {
	start := lx.pos
	src := lx.src
	// The common plain decimal integer (1, 42, 0) is read here: digits
	// with no '_', and then a character that can follow no number.
	if i := start + 1; isDigit(src[start]) && (src[start] != '0' || i >= len(src) || !isDigit(src[i])) {
		for i < len(src) && isDigit(src[i]) {
			i++
		}
		if i >= len(src) || charClass[src[i]]-cDigit > cNonASCII-cDigit {
			lx.pos = i
			lx.emit(Number, start)
			return nil
		}
	}
	at := func(i int) byte {
		if i < len(src) {
			return src[i]
		}
		return 0
	}
	// digitsTail scans digits with single underscores between them, from i.
	digitsTail := func(i int, isD func(byte) bool, kind string) (int, error) {
		for {
			for isD(at(i)) {
				i++
			}
			if at(i) != '_' {
				return i, nil
			}
			i++
			if !isD(at(i)) {
				return i, lx.errf("invalid %s literal", kind)
			}
		}
	}
	end := func(i int, kind string) error {
		if !numberMayEnd(src, i) {
			return lx.errf("invalid %s literal", kind)
		}
		lx.pos = i
		lx.emit(Number, start)
		return nil
	}
	i := start
	if at(i) == '0' && (at(i+1)|0x20 == 'x' || at(i+1)|0x20 == 'o' || at(i+1)|0x20 == 'b') {
		kind, isD := "hexadecimal", isHexDigit
		switch at(i+1) | 0x20 {
		case 'o':
			kind, isD = "octal", func(c byte) bool { return c >= '0' && c <= '7' }
		case 'b':
			kind, isD = "binary", func(c byte) bool { return c == '0' || c == '1' }
		}
		i += 2
		for {
			if at(i) == '_' {
				i++
			}
			if !isD(at(i)) {
				if kind != "hexadecimal" && isDigit(at(i)) {
					return lx.errf("invalid digit '%c' in %s literal", at(i), kind)
				}
				return lx.errf("invalid %s literal", kind)
			}
			for isD(at(i)) {
				i++
			}
			if at(i) != '_' {
				break
			}
		}
		if kind != "hexadecimal" && isDigit(at(i)) {
			return lx.errf("invalid digit '%c' in %s literal", at(i), kind)
		}
		return end(i, kind)
	}
	var err error
	if at(i) != '.' {
		leadingZero := at(i) == '0'
		if i, err = digitsTail(i, isDigit, "decimal"); err != nil {
			return err
		}
		if leadingZero && strings.Trim(strings.ReplaceAll(src[start:i], "_", ""), "0") != "" &&
			at(i) != '.' && at(i)|0x20 != 'e' && at(i)|0x20 != 'j' {
			return lx.errf("leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers")
		}
		if at(i) != '.' && at(i)|0x20 != 'e' && at(i)|0x20 != 'j' {
			return end(i, "decimal")
		}
	}
	if at(i) == '.' {
		i++
		if isDigit(at(i)) {
			if i, err = digitsTail(i, isDigit, "decimal"); err != nil {
				return err
			}
		}
	}
	if at(i)|0x20 == 'e' {
		e := i
		i++
		if at(i) == '+' || at(i) == '-' {
			i++
			if !isDigit(at(i)) {
				return lx.errf("invalid decimal literal")
			}
		} else if !isDigit(at(i)) {
			// "1else": the number ends before the 'e'.
			return end(e, "decimal")
		}
		if i, err = digitsTail(i, isDigit, "decimal"); err != nil {
			return err
		}
	}
	if at(i)|0x20 == 'j' {
		return end(i+1, "imaginary")
	}
	return end(i, "decimal")
}

// numberMayEnd reports whether a number literal may end at src[i]: not
// followed by an identifier character, unless by a keyword that can follow a
// number in valid code (and, else, for, if, in, is, not, or).
func numberMayEnd(src string, i int) bool {
	if i >= len(src) {
		return true
	}
	c := src[i]
	if !(c == '_' || isASCIILetter(c) || isDigit(c) || c >= utf8.RuneSelf) {
		return true
	}
	rest := src[i:]
	for _, kw := range []string{"and", "else", "for", "if", "in", "is", "not", "or"} {
		if strings.HasPrefix(rest, kw) {
			return true
		}
	}
	return false
}

func isHexDigit(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

func (lx *lexer) op() error {
	start := lx.pos
	c := lx.src[start]
	switch c {
	case '.', ':', '=':
		// The common . : = alone, without opAt's search for ... := ==.
		if next := start + 1; next < len(lx.src) && lx.src[next] != c && lx.src[next] != '=' {
			lx.pos = next
			lx.emitOp(start, c)
			return nil
		}
	}
	if code, n := opAt(lx.src[start:]); n > 0 {
		lx.pos += n
		lx.emitOp(start, code)
		return nil
	}
	// A printable ASCII character that starts no token ($, ?, `, a lone !):
	// CPython hands it to the parser, which refuses it there.
	lx.pos++
	return &SyntaxError{Line: lx.line, Msg: "invalid syntax"}
}

// closeError is the error of a closing bracket c that closes no open one,
// or not the innermost.
func (lx *lexer) closeError(c byte) error {
	if len(lx.opens) == 0 {
		return lx.errf("unmatched '%c'", c)
	}
	open := lx.opens[len(lx.opens)-1]
	if open.Line() != lx.line {
		return lx.errf("closing parenthesis '%c' does not match opening parenthesis '%c' on line %d", c, open.code, open.Line())
	}
	return lx.errf("closing parenthesis '%c' does not match opening parenthesis '%c'", c, open.code)
}

// emitOp emits the operator from start with its code.
func (lx *lexer) emitOp(start int, code byte) {
	lx.toks = append(lx.toks, tok{start: int32(start), end: int32(lx.pos), line: int32(lx.line), Kind: Op, code: code})
}

// opAt reads the operator at the start of s, the longest that matches: its
// code (see codes.go) and length, or a length of 0 for none.
func opAt(s string) (byte, int) {
	var c1, c2 byte
	if len(s) > 1 {
		c1 = s[1]
	}
	if len(s) > 2 {
		c2 = s[2]
	}
	c := s[0]
	switch c {
	case '*', '/', '>', '<':
		// *, **, *=, **=; /, //, /=, //=; >, >>, >=, >>=; <, <<, <=, <<=
		if c1 == c {
			if c2 == '=' {
				return [...]byte{'*': opPowEq, '/': opFloorDivEq, '>': opShrEq, '<': opShlEq}[c], 3
			}
			return [...]byte{'*': opPow, '/': opFloorDiv, '>': opShr, '<': opShl}[c], 2
		}
		if c1 == '=' {
			return [...]byte{'*': opMulEq, '/': opDivEq, '>': opGe, '<': opLe}[c], 2
		}
		return c, 1
	case '.':
		if c1 == '.' && c2 == '.' {
			return opEllipsis, 3
		}
		return c, 1
	case '!':
		if c1 == '=' {
			return opNe, 2
		}
		return 0, 0
	case '-':
		if c1 == '>' {
			return opArrow, 2
		}
		if c1 == '=' {
			return opSubEq, 2
		}
		return c, 1
	case '%', '&', '+', ':', '=', '@', '^', '|':
		if c1 == '=' {
			return [...]byte{'%': opModEq, '&': opAndEq, '+': opAddEq, ':': opWalrus, '=': opEq, '@': opMatMulEq, '^': opXorEq, '|': opOrEq}[c], 2
		}
		return c, 1
	case '(', ')', '[', ']', '{', '}', ',', ';', '~':
		return c, 1
	}
	return 0, 0
}
