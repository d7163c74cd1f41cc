// Package pysource reads Python source as CPython 3.11's ast.parse does: it
// refuses what ast.parse refuses (the tokenizer's errors, the grammar of
// every statement and expression, string and f-string literals) and reads the
// module's top-level call statements, enough to find register_*_ci(...) calls
// exactly as Python's own ast module would: a call inside a string, a
// function or a block never counts. docs/python.md lists what is checked.
package pysource

import (
	"fmt"
	"math/bits"
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

// closer is closerOf as a table, for fastTokens.
var closer = func() (t [256]byte) {
	t['('], t['['], t['{'] = ')', ']', '}'
	return t
}()

// nameStop marks the bytes after an ASCII name's letters that fastTokens
// leaves to name: a non-ASCII character (the name goes on, or is an error)
// and a quote (the name is a string's prefix).
var nameStop = func() (t [256]bool) {
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = true
	}
	t['"'], t['\''] = true, true
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
	// opensBuf backs opens at every depth (the tokenizer allows no more),
	// so that fastTokens keeps only a depth in a register.
	opensBuf [maxNesting]tok
	// onLine takes each logical line; nil drops them (the scan after a
	// parser error only looks for tokenizer errors).
	onLine func([]tok) error
	// module, when set, takes the lines instead of onLine: a direct call,
	// where the method value m.line cost a wrapper's call per line.
	module *moduleReader
	// lineDone is set by fastTokens when it has ended the logical line
	// with its NEWLINE: run hands it to onLine.
	lineDone bool
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

func (lx *lexer) run() error {
	for {
		if lx.atLineStart && len(lx.opens) == 0 {
			if lx.pos < len(lx.src) && lx.src[lx.pos] == '\n' {
				// An empty line: indentation's answer (blank) and
				// the reading of it below, without the call.
				lx.pos++
				lx.newline()
				continue
			}
			lx.atLineStart = false
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
				lx.atLineStart = true
				continue
			}
		}
		// The common tokens are read by fastTokens, which makes no call;
		// the others, and those it leaves when a buffer is full, here.
		lx.fastTokens()
		if lx.lineDone {
			lx.lineDone = false
			// flush, for the module reader's lines without the call.
			if m := lx.module; m != nil {
				err := m.line(lx.toks)
				lx.toks = lx.toks[:0]
				if err != nil {
					lx.lineErr = true
					return err
				}
				continue
			}
			if err := lx.flush(); err != nil {
				return err
			}
			continue
		}
		src, pos := lx.src, lx.pos
		if pos >= len(src) {
			break
		}
		c := src[pos]
		switch charClass[c] {
		case cName, cNonASCII:
			// A one-letter prefix and its string (most are f-strings):
			// name's reading of them, without its scan.
			if pos+1 < len(src) && (src[pos+1] == '"' || src[pos+1] == '\'') && isStringPrefix(src[pos:pos+1]) {
				lx.pos = pos + 1
				if err := lx.str(pos); err != nil {
					return err
				}
				continue
			}
			if err := lx.name(); err != nil {
				return err
			}
		case cSpace:
			lx.pos++
		case cBackslash:
			if err := lx.continuation(); err != nil {
				return err
			}
		case cComment:
			lx.skipComment()
			if lx.pos >= len(lx.src) {
				continue
			}
			fallthrough // to the newline that ends the comment
		case cNewline:
			if len(lx.opens) == 0 {
				if err := lx.endLine(); err != nil {
					return err
				}
			} else {
				lx.pos++ // inside brackets: no logical line ends
				lx.newline()
			}
		case cQuote:
			if err := lx.str(lx.pos); err != nil {
				return err
			}
			// A docstring, mostly, which ends its line outside brackets:
			// the newline's reading (cNewline) at once, rather than after
			// a trip through fastTokens.
			if lx.pos < len(lx.src) && lx.src[lx.pos] == '\n' && len(lx.opens) == 0 {
				if err := lx.endLine(); err != nil {
					return err
				}
			}
		case cDigit:
			if err := lx.number(); err != nil {
				return err
			}
		case cDot:
			if lx.pos+1 < len(lx.src) && isDigit(lx.src[lx.pos+1]) {
				if err := lx.number(); err != nil {
					return err
				}
				continue
			}
			if err := lx.op(); err != nil {
				return err
			}
		case cOpen, cClose, cAlone:
			// Brackets and the one-character operators, here rather than
			// in op: they are most of the operators.
			t := tok{start: int32(pos), end: int32(pos + 1), line: int32(lx.line), Kind: Op, code: c}
			switch {
			case charClass[c] == cOpen:
				if len(lx.opens) >= maxNesting {
					return lx.errf("too many nested parentheses")
				}
				lx.opens = append(lx.opens, t)
			case charClass[c] == cClose:
				n := len(lx.opens)
				if n == 0 || closerOf(lx.opens[n-1].code) != c {
					return lx.closeError(c)
				}
				lx.opens = lx.opens[:n-1]
			}
			lx.toks = append(lx.toks, t)
			lx.pos = pos + 1
		case cControl:
			return lx.errf("%s", invalidCharacter(rune(c)))
		default:
			if err := lx.op(); err != nil {
				return err
			}
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

// fastTokens reads tokens from lx.pos while they are of the common kinds
// (spaces between tokens, ASCII names, plain decimal integers, strings on
// one line with no prefix and no backslash, brackets that open or close as
// they should, and operators of one character or of one and '=') and the
// token buffers have room. It stops before anything else: a newline, any
// other string, a comment, a longer operator, a faulty bracket or a full
// buffer, which run reads.
//
// It makes no call, not even for the keyword look-up or a growth of the
// buffers, so that Go keeps its state in registers across tokens.
func (lx *lexer) fastTokens() {
	src, pos, line := lx.src, lx.pos, int32(lx.line)
	toks, opens, depth := lx.toks, &lx.opensBuf, len(lx.opens)
	// The unsigned tests of pos against len(src) here prove the index in
	// range as well (pos is never negative), which saves a bounds check.
	for uint(pos) < uint(len(src)) && len(toks) < cap(toks) {
		c := src[pos]
		start := pos
		kind, code := Op, c
		switch charClass[c] {
		case cSpace:
			pos++
			continue
		case cNewline:
			goto newline
		case cName:
			// next is the byte after the name, or one of its own (no
			// stop) at the end of the source: one read for both tests.
			end, next := pos+1, byte(0)
			for uint(end) < uint(len(src)) {
				if next = src[end]; !identByte[next] {
					break
				}
				end++
			}
			if nameStop[next] {
				goto done // a non-ASCII name or a string prefix: name reads it
			}
			kind, code = Name, kwNone0
			// keywordCode, inline: most names share no slot with a
			// keyword; the others are compared as one 8-byte word. Of
			// the names of one letter (the most common length) only _
			// is one, a soft keyword: no look-up for them.
			if n := end - pos; n == 1 {
				if c == '_' {
					code = kwUnderscore
				}
			} else if n <= 8 {
				if e := &keywordTable[keywordHash(c, src[end-1], n)]; int(e.n) == n {
					var w uint64
					if pos+8 <= len(src) {
						b := src[pos : pos+8]
						w = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
							uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
						w &= uint64(1)<<(8*n) - 1
					} else {
						for i := 0; i < n; i++ {
							w |= uint64(src[pos+i]) << (8 * i)
						}
					}
					if w == e.word {
						code = e.code
					}
				}
			}
			pos = end
		case cDigit:
			// A plain decimal integer (1, 42, 0): digits with no '_',
			// then a character that can follow no number; number reads
			// the others.
			end := pos + 1
			if c == '0' && end < len(src) && isDigit(src[end]) {
				goto done
			}
			for end < len(src) && isDigit(src[end]) {
				end++
			}
			if uint(end) < uint(len(src)) && charClass[src[end]]-cDigit <= cNonASCII-cDigit {
				goto done
			}
			kind, code = Number, 0
			pos = end
		case cQuote:
			// A string on one line with no backslash and no prefix, read
			// as str reads it; str reads the others (a triple quote, an
			// escape, a newline or the end of the source before the
			// closing quote) from the opening quote.
			if pos+2 < len(src) && src[pos+1] == c && src[pos+2] == c {
				goto done
			}
			stop := &stopDouble
			if c == '\'' {
				stop = &stopSingle
			}
			end := pos + 1
			for end < len(src) && !stop[src[end]] {
				end++
			}
			if uint(end) >= uint(len(src)) || src[end] != c {
				goto done
			}
			kind, code = String, 0
			pos = end + 1
		case cOpen:
			if depth >= maxNesting {
				goto done // run refuses the bracket
			}
			o := &opens[depth]
			o.start, o.end, o.line, o.Kind, o.code = int32(pos), int32(pos+1), line, Op, c
			depth++
			pos++
		case cClose:
			if depth == 0 || closer[opens[depth-1].code] != c {
				goto done
			}
			depth--
			pos++
		case cAlone:
			pos++
		case cDot, cOther:
			// One character, or one and '=' (opAt reads the others: **,
			// //, >>, <<, ->, ... and their augmented forms).
			next := byte(0)
			if pos+1 < len(src) {
				next = src[pos+1]
			}
			switch {
			case next == '=' && opWithEq[c] != 0:
				code = opWithEq[c]
				pos += 2
			case opAlone[c] && next != c && !(c == '-' && next == '>') && !(c == '.' && isDigit(next)):
				pos++
			default:
				goto done
			}
		default:
			goto done
		}
		toks = toks[:len(toks)+1]
		t := &toks[len(toks)-1]
		t.start, t.end, t.line, t.Kind, t.code = int32(start), int32(pos), line, kind, code
		// Most tokens are followed by one space: skip it here rather
		// than in a trip round the loop (cSpace would skip it too).
		if uint(pos) < uint(len(src)) && src[pos] == ' ' {
			pos++
		}
	}
	goto done
newline:
	// The end of a logical line with tokens, as run ends it: a NEWLINE,
	// and run hands the line on and reads the next line's indentation.
	// run reads the others: a newline in brackets, or after no token.
	if depth == 0 && len(toks) > 0 && toks[len(toks)-1].Kind < Newline {
		toks = toks[:len(toks)+1]
		t := &toks[len(toks)-1]
		t.start, t.end, t.line, t.Kind, t.code = int32(pos), int32(pos), line, Newline, 0
		pos++
		line++
		lx.lineDone, lx.atLineStart = true, true
	}
done:
	// Only the lengths change: the buffers are the lexer's own (opens is
	// always opensBuf, whose length it never reaches), and a slice cut from
	// itself costs no write barrier.
	lx.pos, lx.line, lx.toks, lx.opens = pos, int(line), lx.toks[:len(toks)], lx.opens[:depth]
}

// opAlone marks the operator characters that are an operator on their own
// (when the next character does not make a longer one): not '!'.
var opAlone = func() (t [256]bool) {
	for _, c := range "%&*+-./:<=>@^|" {
		t[c] = true
	}
	return t
}()

// opWithEq is the code of each operator character followed by '=' (an
// augmented assignment, a comparison or :=), 0 for none.
var opWithEq = func() (t [256]byte) {
	t['%'], t['&'], t['+'], t[':'], t['='], t['@'], t['^'], t['|'] = opModEq, opAndEq, opAddEq, opWalrus, opEq, opMatMulEq, opXorEq, opOrEq
	t['*'], t['/'], t['>'], t['<'], t['-'], t['!'] = opMulEq, opDivEq, opGe, opLe, opSubEq, opNe
	return t
}()

// indentation reads the indentation of a new logical line and emits INDENT or
// DEDENT tokens. It reports a blank (or comment-only) line, which has none.
func (lx *lexer) indentation() (blank bool, err error) {
	col, altcol := 0, 0 // a tab goes to the next multiple of 8, and of 1
	// A line continuation inside the indentation: as in CPython, the column
	// of the first backslash (if not 0) is the line's indentation.
	contCol := 0
	src, i := lx.src, lx.pos
	// Most indentation is spaces only: count them eight at a time, and
	// leave tabs, form feeds and continuations to the loop below.
	for {
		if i+8 > len(src) {
			for i < len(src) && src[i] == ' ' {
				i++
			}
			break
		}
		if x := load64(src, i) ^ 0x2020202020202020; x != 0 {
			i += bits.TrailingZeros64(x) / 8
			break
		}
		i += 8
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

// load64 is the 8 bytes of s at i as a little-endian word (one load).
func load64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

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
		i = skipPlain(src, i, q, stop)
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

// skipPlain returns the index of the first byte from i on that a string's
// scan stops at (stop: its quote q, a backslash, a newline), len(src) for
// none: the byte loop's answer, eight bytes at a time while a word holds
// none of the three.
func skipPlain(src string, i int, q byte, stop *[256]bool) int {
	quotes := uint64(q) * lowBytes
	for i+8 <= len(src) {
		b := src[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if m := zeroBytes(w^quotes) | zeroBytes(w^backslashes) | zeroBytes(w^newlines); m != 0 {
			// The lowest marked byte is the first stop byte.
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(src) && !stop[src[i]] {
		i++
	}
	return i
}

// lowBytes has a 1 in each byte; backslashes and newlines are eight of
// each, for zeroBytes.
const (
	lowBytes    = 0x0101010101010101
	backslashes = '\\' * lowBytes
	newlines    = '\n' * lowBytes
)

// zeroBytes marks the bytes of w that are 0 with their high bit. It may
// also mark a byte above a zero one (the borrow runs on), never one below
// the lowest zero byte, so the lowest mark is exact and a word with no
// zero byte has none (^w keeps out bytes of 0x80 and up).
func zeroBytes(w uint64) uint64 {
	return (w - lowBytes) &^ w & (lowBytes << 7)
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
	case '(', '[', '{':
		if len(lx.opens) >= maxNesting {
			return lx.errf("too many nested parentheses")
		}
		t := tok{start: int32(start), end: int32(start + 1), line: int32(lx.line), Kind: Op, code: c}
		lx.pos = start + 1
		lx.toks = append(lx.toks, t)
		lx.opens = append(lx.opens, t)
		return nil
	case ')', ']', '}':
		if n := len(lx.opens); n == 0 || closerOf(lx.opens[n-1].code) != c {
			return lx.closeError(c)
		}
		lx.opens = lx.opens[:len(lx.opens)-1]
		lx.pos++
		lx.emitOp(start, c)
		return nil
	case ',', ';', '~':
		lx.pos++
		lx.emitOp(start, c)
		return nil
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
