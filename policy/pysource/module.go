package pysource

import (
	"fmt"
	"slices"
	"sync"
)

// Constant is the value of a Python literal (ast.Constant).
type Constant struct {
	// Type is the Python type name: int, float, complex, str, bytes, bool, NoneType or ellipsis.
	Type string
	// Num is the numeric value of an int or float (as float(x) gives it).
	Num float64
	// Overflow is set for an int too large to convert to float.
	Overflow bool
	// Str is the value of a str or bytes literal.
	Str string
	// Bool is the value of True or False.
	Bool bool
}

// Expr is an argument expression, classified the way Python's ast module would.
type Expr struct {
	// Node is the ast node class name, e.g. Constant, List, Tuple, Name, UnaryOp.
	Node string
	// Const is the literal when Node is Constant.
	Const *Constant
	// Elems are the elements of a List.
	Elems []Expr
}

// ArgKind is how an argument is passed.
type ArgKind int

// Argument kinds.
const (
	Positional ArgKind = iota
	Keyword
	Starred    // *args
	DoubleStar // **kwargs
)

// Arg is one argument of a call.
type Arg struct {
	Kind    ArgKind
	Keyword string
	Value   Expr
	Line    int
	// Start and End are the byte offsets of the value in the source as
	// Normalize gives it, without the parentheses around it (as ast's
	// col_offset and end_col_offset place the node).
	Start, End int
}

// Call is a top-level expression statement that calls a bare name.
type Call struct {
	Func string
	Args []Arg
	Line int
}

// TopLevelCalls returns the module's top-level expression statements that are
// calls of a bare name whose name satisfies want, in source order, with their
// arguments parsed. Source CPython 3.11's ast.parse would refuse is a
// *SyntaxError: every logical line is checked against the grammar, and the
// block structure around it (indentation, else/elif/except/finally/case
// clauses, decorators).
func TopLevelCalls(src string, want func(name string) bool) ([]Call, error) {
	// The reader and its statement buffer are reused from call to call:
	// a checkout's files then cost one each per worker, not one each per file.
	// The calls go to m.calls (no closure to allocate for onStmt).
	m := readerPool.Get().(*moduleReader)
	*m = moduleReader{src: Normalize(src), stmt: m.stmt[:0], callsOnly: true, want: want, partialFn: m.partialFn}
	m.frames = m.frameBuf[:1]
	err := m.read()
	calls := m.calls
	clear(m.stmt[:cap(m.stmt)]) // keep no text of this source alive
	*m = moduleReader{stmt: m.stmt[:0], partialFn: m.partialFn}
	readerPool.Put(m)
	if err != nil {
		return nil, err
	}
	return calls, nil
}

var readerPool = sync.Pool{New: func() any { return new(moduleReader) }}

// clause is what a block level allows next, after a compound statement's clause.
type clause uint8

const (
	afterNothing    clause = iota
	afterIf                // elif or else may follow
	afterLoop              // else may follow
	afterTry               // except, except* or finally must follow
	afterExcept            // except, else or finally may follow
	afterExceptStar        // except*, else or finally may follow
	afterTryElse           // finally may follow
)

// frame is one block level: what its last clause lets follow.
type frame struct {
	after clause
	// matchBlock is set for the body of a match statement: case clauses only.
	matchBlock bool
	// decorator is the line of a decorator still waiting for its def or class.
	decorator int
}

// topLevelStatements hands each simple statement of the module's top level
// (not inside a block, a decorator or a compound statement's header) to
// onStmt, in source order. Source CPython 3.11's ast.parse would refuse is a
// *SyntaxError: every logical line is checked against the grammar, and the
// block structure around it (indentation, else/elif/except/finally/case
// clauses, decorators).
func topLevelStatements(src string, onStmt func(stmt []Token) error) error {
	return newModuleReader(src, onStmt).read()
}

func newModuleReader(src string, onStmt func(stmt []Token) error) *moduleReader {
	m := &moduleReader{src: Normalize(src), onStmt: onStmt}
	m.frames = m.frameBuf[:1]
	return m
}

// read checks the whole module, handing on its top-level statements.
//
// The method value m.partial is made once per reader and kept across its
// reuses (it is bound to m): it costs an allocation. The lines go to m.line
// by a direct call.
func (m *moduleReader) read() error {
	if m.partialFn == nil {
		m.partialFn = m.partial
	}
	return scanInto(m.src, m, nil, m.partialFn)
}

// moduleReader follows the module's logical lines, checks each against the
// grammar and the block structure, and hands on the top-level simple
// statements.
type moduleReader struct {
	// src is the normalized source the tokens point into.
	src    string
	onStmt func(stmt []Token) error
	// callsOnly hands on only the statements that may be calls (see
	// mayBeCall), for TopLevelCalls: the others cost no Tokens. The calls
	// of want are kept in calls, and onStmt is not used.
	callsOnly bool
	want      func(name string) bool
	calls     []Call
	// partialFn is m.partial (see read).
	partialFn func([]tok, *SyntaxError) *SyntaxError
	// stmt holds the tokens of the top-level statement handed to onStmt,
	// reused from one to the next.
	stmt   []Token
	frames []frame // frames[0] is the module
	// frameBuf backs frames for the common depths.
	frameBuf [8]frame
	// expectBlock is set after a block header ending in ':'; header and
	// headerLine name it.
	expectBlock bool
	header      stmtKind
	headerLine  int
}

// line reads one chunk from Scan: leading INDENT/DEDENT tokens, a logical
// line and its NEWLINE; the last chunk ends with DEDENTs and EOF.
func (m *moduleReader) line(toks []tok) error {
	// The common chunk: no INDENT or DEDENT before the line, one NEWLINE
	// after it (the kinds below Newline are those of a line's tokens).
	// The general reading below does the same for it.
	if n := len(toks); n >= 2 && toks[0].Kind < Newline && toks[n-1].Kind == Newline && toks[n-2].Kind < Newline {
		return m.logicalLine(toks[:n-1])
	}
	i, err := m.blocks(toks)
	if err != nil {
		return err
	}
	line := toks[i:]
	// The next most common: INDENT or DEDENT tokens, then a line and one
	// NEWLINE.
	if n := len(line); n >= 2 && line[n-1].Kind == Newline && line[n-2].Kind < Newline {
		return m.logicalLine(line[:n-1])
	}
	n := len(line)
	for n > 0 && (line[n-1].Kind == Newline || line[n-1].Kind == Dedent || line[n-1].Kind == EOF) {
		n--
	}
	if n > 0 {
		if err := m.logicalLine(line[:n]); err != nil {
			return err
		}
	}
	// The last chunk closes every open level.
	for _, t := range line[n:] {
		switch t.Kind {
		case Dedent:
			if m.expectBlock {
				return m.expectedBlock(t.Line()) // as in blocks
			}
			if err := m.closeLevel(t.Line()); err != nil {
				return err
			}
		case EOF:
			if m.expectBlock {
				return m.expectedBlock(t.Line())
			}
			return m.closeLevel(t.Line())
		}
	}
	return nil
}

// blocks reads the INDENT and DEDENT tokens that start a line and returns
// how many there are.
func (m *moduleReader) blocks(toks []tok) (int, error) {
	i := 0
	for ; i < len(toks) && (toks[i].Kind == Indent || toks[i].Kind == Dedent); i++ {
		if toks[i].Kind == Dedent {
			// A header's block must start with INDENT: CPython's parser
			// fails at the DEDENT before it closes anything.
			if m.expectBlock {
				return i, m.expectedBlock(toks[i].Line())
			}
			if err := m.closeLevel(toks[i].Line()); err != nil {
				return i, err
			}
			continue
		}
		if !m.expectBlock {
			return i, &SyntaxError{Line: toks[i].Line(), Msg: "unexpected indent", class: finalErr}
		}
		m.expectBlock = false
		m.frames = append(m.frames, frame{matchBlock: m.header == sMatch})
	}
	return i, nil
}

// partial chooses between a tokenizer error and the parser for a logical
// line the tokenizer cut short: CPython's parser reads the tokens before the
// refused one first, and fails there if they cannot start a statement.
func (m *moduleReader) partial(toks []tok, lexErr *SyntaxError) *SyntaxError {
	i, err := m.blocks(toks)
	if err != nil {
		return rank(err.(*SyntaxError), lexErr)
	}
	rest := toks[i:]
	if len(rest) == 0 {
		return lexErr
	}
	if m.expectBlock {
		return rank(m.expectedBlock(rest[0].Line()), lexErr)
	}
	p := parser{src: m.src, toks: rest}
	_, _, ok := p.statement()
	if !(ok && !p.failed()) {
		p.far = reach(m.src, rest, 0, 0, statementRule)
	}
	if ok && !p.failed() || p.far >= len(rest) && !p.failed() || p.juxtaposedReach() >= len(rest) {
		return lexErr // the parser needed the refused token
	}
	return rank(p.explain(), lexErr)
}

// rank returns the error CPython reports when its parser failed with
// parserErr before its tokenizer met lexErr.
func rank(parserErr, lexErr *SyntaxError) *SyntaxError {
	switch {
	case parserErr.class == finalErr:
		return parserErr
	case lexErr.class == tokErr:
		return lexErr
	case lexErr.class == unclosedErr && parserErr.Line > lexErr.bracketLine:
		return lexErr
	}
	return parserErr
}

// expectedBlock is the error of a block header with no block after it.
func (m *moduleReader) expectedBlock(line int) *SyntaxError {
	return &SyntaxError{Line: line, Msg: "expected an indented block after " + m.header.header() + fmt.Sprintf(" on line %d", m.headerLine)}
}

// closeLevel ends the innermost block level (or, at EOF, the module): a try
// without except or finally, or a decorator without its definition, is an
// error there.
func (m *moduleReader) closeLevel(line int) error {
	f := m.frames[len(m.frames)-1]
	if f.after == afterTry {
		return &SyntaxError{Line: line, Msg: "expected 'except' or 'finally' block"}
	}
	if f.decorator > 0 {
		return &SyntaxError{Line: line, Msg: "invalid syntax"}
	}
	if len(m.frames) > 1 {
		m.frames = m.frames[:len(m.frames)-1]
	}
	return nil
}

// logicalLine checks one statement and, at the top level, keeps the wanted calls.
func (m *moduleReader) logicalLine(line []tok) error {
	if m.expectBlock {
		return m.expectedBlock(line[0].Line())
	}
	// The line's kind, whether it is a block header whose block follows,
	// or CPython's error: the parser is here, as a call per line would
	// cost more than it.
	// Field by field: a composite literal is built aside and copied.
	var p parser
	p.src, p.toks = m.src, line
	k, block, ok := p.statement()
	if !ok || p.failed() {
		return p.statementError()
	}
	// sequence's common case, without the call.
	if f := &m.frames[len(m.frames)-1]; k == sSimple && !f.matchBlock && f.decorator == 0 && f.after != afterTry {
		f.after = afterNothing
	} else if err := m.sequence(k, line[0].Line()); err != nil {
		return err
	}
	if block {
		m.expectBlock, m.header, m.headerLine = true, k, line[0].Line()
	}
	if len(m.frames) != 1 || k != sSimple {
		return nil
	}
	// Only top-level simple statements become Tokens with their text: few
	// lines of a test file are, and the readers of calls and assignments
	// look at text.
	depth, start := 0, 0
	for i, t := range line {
		if t.Kind != Op {
			continue
		}
		switch t.code {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ';':
			if depth == 0 {
				if err := m.statement(line[start:i]); err != nil {
					return err
				}
				start = i + 1
			}
		}
	}
	if start < len(line) || start == 0 {
		return m.statement(line[start:])
	}
	return nil
}

// statement hands one top-level simple statement to onStmt as Tokens.
func (m *moduleReader) statement(toks []tok) error {
	if m.callsOnly && !mayBeCall(toks) {
		return nil
	}
	m.stmt = m.stmt[:0]
	for _, t := range toks {
		m.stmt = append(m.stmt, t.token(m.src))
	}
	if m.callsOnly {
		c, ok, err := callStatement(m.stmt, m.want)
		if ok {
			m.calls = append(m.calls, c)
		}
		return err
	}
	return m.onStmt(m.stmt)
}

// mayBeCall reports whether a statement's tokens can be what callStatement
// reads as a call, NAME ... ')' after any enclosing parentheses: at least
// three tokens, the first a name or '(', the last ')'. callStatement refuses
// (with no error) every other statement.
func mayBeCall(toks []tok) bool {
	n := len(toks)
	return n >= 3 && toks[n-1].Kind == Op && toks[n-1].code == ')' &&
		(toks[0].Kind == Name || toks[0].Kind == Op && toks[0].code == '(')
}

// sequence checks that a statement may stand where it does at its level:
// elif, else, except, except* and finally only after the clauses they
// continue; case only in a match block, which holds nothing else; a decorator
// only before a def or class.
func (m *moduleReader) sequence(k stmtKind, line int) error {
	f := &m.frames[len(m.frames)-1]
	// The common case, a simple statement where one may stand: what the
	// general path below does for it.
	if k == sSimple && !f.matchBlock && f.decorator == 0 && f.after != afterTry {
		f.after = afterNothing
		return nil
	}
	// After a try's block only except, except* or finally may stand (the
	// look-ahead of CPython's invalid_try_stmt): an else, elif or case
	// there is this error too, not "invalid syntax".
	if f.after == afterTry && k != sExcept && k != sExceptStar && k != sFinally {
		return &SyntaxError{Line: line, Msg: "expected 'except' or 'finally' block"}
	}
	invalid := func() error { return &SyntaxError{Line: line, Msg: "invalid syntax"} }
	if f.matchBlock != (k == sCase) {
		return invalid()
	}
	if f.decorator > 0 && k != sDecorator && k != sDef && k != sClass {
		return invalid()
	}
	switch k {
	case sElif:
		if f.after != afterIf {
			return invalid()
		}
		return nil
	case sElse:
		switch f.after {
		case afterIf, afterLoop:
			f.after = afterNothing
		case afterExcept, afterExceptStar:
			f.after = afterTryElse
		default:
			return invalid()
		}
		return nil
	case sExcept, sExceptStar:
		star := k == sExceptStar
		switch {
		case f.after == afterTry:
		case f.after == afterExcept && !star, f.after == afterExceptStar && star:
		case f.after == afterExcept || f.after == afterExceptStar:
			return &SyntaxError{Line: line, Msg: "cannot have both 'except' and 'except*' on the same 'try'"}
		default:
			return invalid()
		}
		f.after = afterExcept
		if star {
			f.after = afterExceptStar
		}
		return nil
	case sFinally:
		switch f.after {
		case afterTry, afterExcept, afterExceptStar, afterTryElse:
			f.after = afterNothing
			return nil
		}
		return invalid()
	}
	f.after = afterNothing
	f.decorator = 0
	switch k {
	case sIf:
		f.after = afterIf
	case sFor, sWhile:
		f.after = afterLoop
	case sTry:
		f.after = afterTry
	case sDecorator:
		f.decorator = line
	}
	return nil
}

// eachTop calls fn for every token outside brackets (the brackets themselves
// excluded), in order, until fn returns false.
func eachTop(toks []Token, fn func(k int, t Token) bool) {
	depth := 0
	for k, t := range toks {
		if t.Kind == Op {
			switch t.Text {
			case "(", "[", "{":
				depth++
				continue
			case ")", "]", "}":
				depth--
				continue
			}
		}
		if depth == 0 && !fn(k, t) {
			return
		}
	}
}

// splitTop splits tokens on an operator outside brackets. An empty trailing
// piece (after a final separator) is dropped.
func splitTop(toks []Token, sep string) [][]Token {
	// The pieces go to a buffer on the stack first, so the result is
	// allocated once, at its size.
	var buf [8][]Token
	return slices.Clone(appendSplitTop(buf[:0], toks, sep))
}

// appendSplitTop is splitTop appending the pieces to parts, which is empty.
func appendSplitTop(parts [][]Token, toks []Token, sep string) [][]Token {
	start := 0
	eachTop(toks, func(k int, t Token) bool {
		if t.Kind == Op && t.Text == sep {
			parts = append(parts, toks[start:k])
			start = k + 1
		}
		return true
	})
	if start < len(toks) || len(parts) == 0 {
		parts = append(parts, toks[start:])
	}
	return parts
}

// matching returns the index of the bracket closing the one at open.
func matching(toks []Token, open int) int {
	depth := 0
	for k := open; k < len(toks); k++ {
		if toks[k].Kind != Op {
			continue
		}
		switch toks[k].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// stripParens removes parentheses that wrap the whole token list.
//
// It reads the tokens once: peeling one layer at a time with a scan each
// made 200 nested parentheses cost 200 scans.
func stripParens(toks []Token) []Token {
	n := len(toks)
	lead := 0
	for lead < n && toks[lead].Kind == Op && toks[lead].Text == "(" {
		lead++
	}
	if lead == 0 || n < 2 {
		return toks
	}
	// closes[j] is where the j-th leading '(' closes; comma[d] is set for
	// a comma with d brackets open around it.
	var closesBuf [8]int
	var commaBuf [9]bool
	closes, comma := closesBuf[:0], commaBuf[:0]
	if lead > len(closesBuf) {
		closes, comma = make([]int, 0, lead), make([]bool, 0, lead+1)
	}
	closes, comma = closes[:lead], comma[:lead+1]
	for j := range closes {
		closes[j] = -1
	}
	depth := 0
	for k, t := range toks {
		if t.Kind != Op {
			continue
		}
		switch t.Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth >= 0 && depth < lead && closes[depth] < 0 {
				closes[depth] = k
			}
		case ",":
			if depth >= 0 && depth <= lead {
				comma[depth] = true
			}
		}
		if depth < 0 {
			break // unbalanced: the parser refused this already
		}
	}
	j := 0
	for ; j < lead && closes[j] == n-1-j; j++ {
		// Layer j holds toks[j+1 : n-1-j]: () or (a, b) is a tuple, not a grouping.
		if n-2-2*j == 0 || comma[j+1] {
			break
		}
	}
	return toks[j : n-j]
}

func hasTopComma(toks []Token) bool { return containsTopOp(toks, ",") }

// callStatement reports whether a simple statement is exactly a call of a
// wanted bare name, e.g. `register_cpu_ci(1, "s")` or `(register_cpu_ci)(...)`.
func callStatement(stmt []Token, want func(string) bool) (Call, bool, error) {
	stmt = stripParens(stmt)
	n := len(stmt)
	if n < 3 || stmt[n-1].Kind != Op || stmt[n-1].Text != ")" {
		return Call{}, false, nil
	}
	// Find the '(' that opens the final trailer.
	open := -1
	depth := 0
	for k := n - 1; k >= 0; k-- {
		if stmt[k].Kind != Op {
			continue
		}
		switch stmt[k].Text {
		case ")", "]", "}":
			depth++
		case "(", "[", "{":
			depth--
		}
		if depth == 0 {
			open = k
			break
		}
	}
	if open <= 0 {
		return Call{}, false, nil
	}
	callee := stripParens(stmt[:open])
	if len(callee) != 1 || callee[0].Kind != Name || !want(callee[0].Ident()) {
		return Call{}, false, nil
	}
	args, err := parseArgs(stmt[open+1 : n-1])
	if err != nil {
		return Call{}, false, err
	}
	return Call{Func: callee[0].Ident(), Args: args, Line: callee[0].Line}, true, nil
}

func parseArgs(toks []Token) ([]Arg, error) {
	if len(toks) == 0 {
		return nil, nil
	}
	var piecesBuf [8][]Token // the pieces stay here: no allocation for a short call
	pieces := appendSplitTop(piecesBuf[:0], toks, ",")
	args := make([]Arg, 0, len(pieces))
	consts := make(constArena, 0, len(pieces)) // most arguments are one constant
	seenKeyword, seenDoubleStar := false, false
	for _, piece := range pieces {
		if len(piece) == 0 {
			return nil, &SyntaxError{Line: toks[0].Line, Msg: "invalid syntax: empty argument"}
		}
		line := piece[0].Line
		switch {
		case piece[0].Kind == Op && piece[0].Text == "**":
			if len(piece) == 1 {
				return nil, &SyntaxError{Line: line, Msg: "invalid syntax after '**'"}
			}
			seenDoubleStar = true
			args = append(args, spanned(Arg{Kind: DoubleStar, Value: classify(piece[1:], &consts), Line: line}, piece[1:]))
		case piece[0].Kind == Op && piece[0].Text == "*":
			if len(piece) == 1 {
				return nil, &SyntaxError{Line: line, Msg: "invalid syntax after '*'"}
			}
			if seenDoubleStar {
				return nil, &SyntaxError{Line: line, Msg: "iterable argument unpacking follows keyword argument unpacking"}
			}
			args = append(args, spanned(Arg{Kind: Starred, Value: classify(piece[1:], &consts), Line: line}, piece[1:]))
		case len(piece) >= 2 && piece[0].Kind == Name && piece[1].Kind == Op && piece[1].Text == "=":
			if len(piece) == 2 {
				return nil, &SyntaxError{Line: line, Msg: "expected argument value expression"}
			}
			seenKeyword = true
			args = append(args, spanned(Arg{Kind: Keyword, Keyword: piece[0].Ident(), Value: classify(piece[2:], &consts), Line: line}, piece[2:]))
		default:
			if seenDoubleStar {
				return nil, &SyntaxError{Line: line, Msg: "positional argument follows keyword argument unpacking"}
			}
			if seenKeyword {
				return nil, &SyntaxError{Line: line, Msg: "positional argument follows keyword argument"}
			}
			v := classify(piece, &consts)
			if v.Node == "Invalid" {
				return nil, &SyntaxError{Line: line, Msg: "invalid syntax in call arguments"}
			}
			args = append(args, spanned(Arg{Kind: Positional, Value: v, Line: line}, piece))
		}
		if last := args[len(args)-1]; last.Value.Node == "Invalid" {
			return nil, &SyntaxError{Line: line, Msg: "invalid syntax in call arguments"}
		}
	}
	return args, nil
}

// spanned sets a's Start and End to the value tokens' bytes, without the
// parentheses around them.
func spanned(a Arg, value []Token) Arg {
	value = stripParens(value)
	if len(value) > 0 {
		last := value[len(value)-1]
		a.Start, a.End = value[0].Offset(), last.Offset()+len(last.Text)
	}
	return a
}

// unaryOps start an ast.UnaryOp.
var unaryOps = map[string]bool{"-": true, "+": true, "~": true}

// binaryOps join operands into a BinOp.
var binaryOps = map[string]bool{"+": true, "-": true, "*": true, "/": true, "//": true, "%": true, "**": true,
	"@": true, "<<": true, ">>": true, "&": true, "|": true, "^": true}

var compareOps = map[string]bool{"<": true, ">": true, "==": true, "!=": true, "<=": true, ">=": true}

// constArena hands out the Constants of one call's arguments from one
// allocation, while it has room; a nil arena allocates each.
type constArena []Constant

func (a *constArena) new(c Constant) *Constant {
	if a == nil || len(*a) == cap(*a) {
		p := new(Constant) // not &c, which would put every c on the heap
		*p = c
		return p
	}
	*a = append(*a, c)
	return &(*a)[len(*a)-1]
}

// classify names the ast node an expression parses to and reads its literal
// value, if it is one. It recognises exactly the literal forms the registry
// accepts; anything else is named as closely as needed for error messages.
func classify(toks []Token, a *constArena) Expr {
	toks = stripParens(toks)
	if len(toks) == 0 {
		return Expr{Node: "Invalid"}
	}
	first := toks[0]
	if len(toks) == 1 {
		switch first.Kind {
		case Number:
			n, err := ParseNumber(first.Text)
			if err != nil {
				return Expr{Node: "Invalid"}
			}
			c := a.new(Constant{Num: n.Value, Overflow: n.Overflow})
			c.Type = [...]string{"int", "float", "complex"}[n.Kind]
			return Expr{Node: "Constant", Const: c}
		case Name:
			switch first.Text {
			case "True", "False":
				return Expr{Node: "Constant", Const: a.new(Constant{Type: "bool", Bool: first.Text == "True"})}
			case "None":
				return Expr{Node: "Constant", Const: a.new(Constant{Type: "NoneType"})}
			}
			return Expr{Node: "Name"}
		case Op:
			if first.Text == "..." {
				return Expr{Node: "Constant", Const: a.new(Constant{Type: "ellipsis"})}
			}
			return Expr{Node: "Invalid"}
		}
	}
	if allStrings(toks) {
		return classifyStrings(toks, a)
	}
	if first.Kind == Op && (first.Text == "[" || first.Text == "(" || first.Text == "{") && matching(toks, 0) == len(toks)-1 {
		inner := toks[1 : len(toks)-1]
		if containsTopName(inner, "for") {
			return Expr{Node: map[string]string{"[": "ListComp", "(": "GeneratorExp", "{": "SetComp"}[first.Text]}
		}
		switch first.Text {
		case "[":
			e := Expr{Node: "List"}
			if len(inner) > 0 {
				for _, p := range splitTop(inner, ",") {
					el := classify(p, a)
					if el.Node == "Invalid" {
						return el
					}
					e.Elems = append(e.Elems, el)
				}
			}
			return e
		case "(":
			return Expr{Node: "Tuple"}
		default:
			if len(inner) == 0 || containsTopOp(inner, ":") {
				return Expr{Node: "Dict"}
			}
			return Expr{Node: "Set"}
		}
	}
	top := topFactsOf(toks)
	switch {
	case first.Kind == Name && first.Text == "lambda":
		return Expr{Node: "Lambda"}
	case top.ifKw:
		return Expr{Node: "IfExp"}
	case top.orAnd:
		return Expr{Node: "BoolOp"}
	case first.Kind == Name && first.Text == "not":
		return Expr{Node: "UnaryOp"}
	case top.walrus:
		return Expr{Node: "NamedExpr"}
	case top.compare:
		return Expr{Node: "Compare"}
	case hasBinary(toks):
		return Expr{Node: "BinOp"}
	case first.Kind == Op && unaryOps[first.Text]:
		return Expr{Node: "UnaryOp"}
	case first.Kind == Name && first.Text == "await":
		return Expr{Node: "Await"}
	}
	last := toks[len(toks)-1]
	switch {
	case last.Kind == Op && last.Text == ")":
		return Expr{Node: "Call"}
	case last.Kind == Op && last.Text == "]":
		return Expr{Node: "Subscript"}
	case len(toks) >= 3 && toks[len(toks)-2].Kind == Op && toks[len(toks)-2].Text == "." && last.Kind == Name:
		return Expr{Node: "Attribute"}
	case hasFString(toks):
		return Expr{Node: "JoinedStr"}
	}
	return Expr{Node: "Expr"}
}

func allStrings(toks []Token) bool {
	for _, t := range toks {
		if t.Kind != String {
			return false
		}
	}
	return true
}

func hasFString(toks []Token) bool {
	for _, t := range toks {
		if t.Kind == String {
			if s, err := DecodeString(t.Text); err == nil && s.FString {
				return true
			}
		}
	}
	return false
}

// classifyStrings joins adjacent string literals, as Python's parser does.
func classifyStrings(toks []Token, a *constArena) Expr {
	var value string
	bytesSeen, textSeen, fstring := false, false, false
	for _, t := range toks {
		s, err := DecodeString(t.Text)
		if err != nil {
			return Expr{Node: "Invalid"}
		}
		if s.Bytes {
			bytesSeen = true
		} else {
			textSeen = true
		}
		fstring = fstring || s.FString
		value += s.Value
	}
	if bytesSeen && textSeen {
		return Expr{Node: "Invalid"} // cannot mix bytes and nonbytes literals
	}
	if fstring {
		return Expr{Node: "JoinedStr"}
	}
	typ := "str"
	if bytesSeen {
		typ = "bytes"
	}
	return Expr{Node: "Constant", Const: a.new(Constant{Type: typ, Str: value})}
}

func containsTopName(toks []Token, name string) bool { return containsTop(toks, Name, name) }

func containsTopOp(toks []Token, op string) bool { return containsTop(toks, Op, op) }

// containsTop reports a token of kind k and text outside brackets.
func containsTop(toks []Token, k Kind, text string) bool {
	found := false
	eachTop(toks, func(_ int, t Token) bool {
		found = t.Kind == k && t.Text == text
		return !found
	})
	return found
}

// topFacts are what classify asks about the tokens outside brackets.
type topFacts struct {
	ifKw    bool // an 'if'
	orAnd   bool // an 'or' or 'and'
	walrus  bool // a ':='
	compare bool // a comparison operator, or 'in' or 'is' after the first token
}

// topFactsOf reads the tokens outside brackets once, for all of classify's
// questions (a scan per question made classify the cost of a call's
// arguments).
func topFactsOf(toks []Token) topFacts {
	var f topFacts
	depth := 0
	for k, t := range toks {
		switch t.Kind {
		case Op:
			switch t.Text {
			case "(", "[", "{":
				depth++
				continue
			case ")", "]", "}":
				depth--
				continue
			}
			if depth == 0 {
				switch {
				case t.Text == ":=":
					f.walrus = true
				case compareOps[t.Text]:
					f.compare = true
				}
			}
		case Name:
			if depth == 0 {
				switch t.Text {
				case "if":
					f.ifKw = true
				case "or", "and":
					f.orAnd = true
				case "in", "is":
					f.compare = f.compare || k > 0
				}
			}
		}
	}
	return f
}

// hasBinary reports a binary operator after the first operand at depth 0.
func hasBinary(toks []Token) bool {
	depth := 0
	prevOperand := false
	for _, t := range toks {
		if t.Kind == Op {
			switch t.Text {
			case "(", "[", "{":
				depth++
				continue
			case ")", "]", "}":
				depth--
				if depth == 0 {
					prevOperand = true
				}
				continue
			}
			if depth == 0 && binaryOps[t.Text] && prevOperand {
				return true
			}
			if depth == 0 {
				prevOperand = false
			}
			continue
		}
		if depth == 0 {
			prevOperand = true
		}
	}
	return false
}
