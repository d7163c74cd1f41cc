package pysource

import (
	"fmt"
	"strings"
)

// This file checks each logical line against the statement and expression
// grammar of CPython 3.11 (Grammar/python.gram): it accepts exactly the lines
// ast.parse accepts, without building a tree. Each rule is a method that
// returns false, with the position unchanged, when the rule does not match;
// PEG's ordered choice is a sequence of such calls. Errors CPython raises while
// it parses (a bad string or number literal, an f-string) are hard errors that
// stop the parse; otherwise a line that does not match is "invalid syntax" at
// the furthest token looked at, as CPython reports it, or one of CPython's more
// specific messages for the common mistakes (see explain).

// isKeyword reports Python 3.11's reserved words; match, case and _ are
// soft keywords, reserved only where their statement allows.
func isKeyword(s string) bool {
	switch s {
	case "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
		"def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
		"is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield":
		return true
	}
	return false
}

// kind is the ast node class an expression parses to, as far as the grammar's
// checks (assignment and del targets) and their messages need it.
type kind uint8

const (
	kNone kind = iota // no node
	kName
	kAttribute
	kSubscript
	kStarred
	kTuple
	kList
	kCall
	kLiteral // a number, string or bytes constant
	kNoneConst
	kTrueConst
	kFalseConst
	kEllipsis
	kFString
	kOperator // BinOp, UnaryOp, BoolOp
	kCompare
	kLambda
	kIfExp
	kNamedExpr
	kAwait
	kYield
	kGenExp
	kListComp
	kSetComp
	kDictComp
	kDict
	kSet
)

// name is how CPython's messages call a node (_PyPegen_get_expr_name).
func (k kind) name() string {
	return [...]string{
		kNone: "expression", kName: "name", kAttribute: "attribute", kSubscript: "subscript",
		kStarred: "starred", kTuple: "tuple", kList: "list", kCall: "function call", kLiteral: "literal",
		kNoneConst: "None", kTrueConst: "True", kFalseConst: "False", kEllipsis: "ellipsis",
		kFString: "f-string expression", kOperator: "expression", kCompare: "comparison",
		kLambda: "lambda", kIfExp: "conditional expression", kNamedExpr: "named expression",
		kAwait: "await expression", kYield: "yield expression", kGenExp: "generator expression",
		kListComp: "list comprehension", kSetComp: "set comprehension", kDictComp: "dict comprehension",
		kDict: "dict literal", kSet: "set display",
	}[k]
}

// ex describes a parsed expression: its node, and whether it would be a valid
// assignment or del target (and if not, the node to blame, as CPython does).
type ex struct {
	k kind
	// store is kNone when the expression is a valid star_targets, else the
	// first node that is not a target.
	store kind
	// del is kNone when the expression is a valid del_targets, else the
	// first node that cannot be deleted.
	del kind
	// single is set for a single_target: a name, attribute or subscript,
	// possibly in parentheses.
	single bool
}

// leaf is an expression that is no target at all.
func leaf(k kind) ex { return ex{k: k, store: k, del: k} }

// stmtKind is what a logical line is, for the block structure module.go checks.
type stmtKind uint8

const (
	sSimple stmtKind = iota
	sIf
	sElif
	sElse
	sWhile
	sFor
	sWith
	sTry
	sExcept
	sExceptStar
	sFinally
	sDef
	sClass
	sDecorator
	sMatch
	sCase
)

// header names a compound statement in CPython's "expected an indented
// block after ..." message.
func (s stmtKind) header() string {
	switch s {
	case sDef:
		return "function definition"
	case sClass:
		return "class definition"
	case sExceptStar:
		return "'except*' statement"
	}
	return "'" + [...]string{sIf: "if", sElif: "elif", sElse: "else", sWhile: "while", sFor: "for", sWith: "with",
		sTry: "try", sExcept: "except", sFinally: "finally", sMatch: "match", sCase: "case"}[s] + "' statement"
}

// maxDepth bounds the parser's recursion. CPython stops at a depth of 6000
// rules ("too complex"); real code never nests more than a few dozen deep.
const maxDepth = 3000

// parser checks the tokens of one logical line (no INDENT, DEDENT or NEWLINE).
type parser struct {
	// src is the text the tokens' offsets point into.
	src  string
	toks []tok
	pos  int
	// far is the furthest index past the end of toks looked at (reading
	// there finds the end of the line), else what it was set to. Reads
	// inside toks are not recorded, which keeps the common path to one
	// bounds check: reach finds the furthest token looked at, where
	// "invalid syntax" points, by parsing a failed line again on shorter
	// token slices.
	far int
	// cut is set when toks is only the start of the line (see reach): the
	// end of toks is not the end of the line there.
	cut bool
	// hint and hintLine are CPython's message for a recognised mistake.
	hint     string
	hintLine int
	depth    int
	// hard is an error CPython raises while parsing; it ends the parse.
	hard *SyntaxError
	// inMatchBlock is set while the line is a statement of a match block:
	// only a case clause may stand there.
	endLine int
}

// line is the 1-based line of token i (the line's last token past the end).
func (p *parser) lineOf(i int) int {
	if i >= len(p.toks) {
		if len(p.toks) == 0 {
			return p.endLine
		}
		return p.toks[len(p.toks)-1].Line()
	}
	return p.toks[i].Line()
}

// text is the source text of a token.
func (p *parser) text(t tok) string { return p.src[t.start:t.end] }

// peekAt is token i, without a copy (a tok has too many fields to live in
// registers: a copy goes through memory); callers only read it.
func (p *parser) peekAt(i int) *tok {
	if uint(i) < uint(len(p.toks)) {
		return &p.toks[i]
	}
	return p.pastEnd(i)
}

// next is the next token, without a copy; endOfLine at the end of the
// line, so that callers need no check for none. Callers only read it.
func (p *parser) next() *tok {
	if uint(p.pos) < uint(len(p.toks)) {
		return &p.toks[p.pos]
	}
	return p.pastEnd(p.pos)
}

// pastEnd is the token at index i, past the end of the line: it records
// i in far (see reach).
func (p *parser) pastEnd(i int) *tok {
	if i > p.far {
		p.far = i
	}
	return &endOfLine
}

// reach is the furthest token index rule looks at when it runs on toks from
// position from (an index past the end when it reads the end of the line).
//
// The parse records only its reads past the end of its tokens. A parse of
// toks[:k] goes exactly as the parse of toks until it first reads an index
// of k or more (where it finds the end of the line instead), so it records
// such a read if and only if the full parse reads that far; the furthest
// index is then found by bisection, each step a parse of the failed line.
func reach(src string, toks []tok, endLine, from int, rule func(*parser)) int {
	run := func(k int) int {
		q := parser{src: src, toks: toks[:k], endLine: endLine, pos: from, far: -1, cut: k < len(toks)}
		rule(&q)
		return q.far
	}
	n := len(toks)
	if far := run(n); far >= n || from >= n {
		return max(far, from)
	}
	// Every rule reads the token at from first: the furthest is at least there.
	lo, hi := from, n-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if run(mid) >= mid {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// endOfLine is the token next returns past the last one.
var endOfLine = tok{Kind: Newline}

func (p *parser) atEnd() bool { return p.next().Kind == Newline }

// isOp reports whether the next token is the operator with code c: only
// an operator has such a code (see codes.go).
func (p *parser) isOp(c byte) bool { return p.next().code == c }

// isKw reports whether the next token is the keyword (or soft keyword)
// with code c: only a Name has such a code.
func (p *parser) isKw(c byte) bool { return p.next().code == c }

func (p *parser) op(c byte) bool {
	if p.isOp(c) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) kw(c byte) bool {
	if p.isKw(c) {
		p.pos++
		return true
	}
	return false
}

// name accepts an identifier that is not a keyword.
func (p *parser) name() bool {
	t := p.next()
	if t.Kind == Name && !t.reserved() {
		p.pos++
		return true
	}
	return false
}

// enter guards the recursion; every recursive rule calls it.
func (p *parser) enter() bool {
	p.depth++
	if p.depth > maxDepth {
		if p.hard == nil {
			p.hard = &SyntaxError{Line: p.lineOf(p.pos), Msg: "too many nested expressions (CPython: source too complex to parse)"}
		}
		return false
	}
	return true
}

// failed reports a hard error: the parse must stop.
func (p *parser) failed() bool { return p.hard != nil }

// fail notes CPython's message for a mistake a rule recognises (the first
// one noted is kept for the error, should the line fail) and returns false.
func (p *parser) fail(msg string) bool {
	if p.hint == "" {
		p.hint, p.hintLine = msg, p.lineOf(p.pos)
	}
	return false
}

// ---- expressions ----

// starExpressions: star_expression (',' star_expression)* [','], a tuple when
// there is a comma.
func (p *parser) starExpressions() (ex, bool) {
	var first ex
	ok := false
	if p.mayEndAtom() {
		first, ok = p.simpleAtom() // starExpression's answer for a simple atom
	}
	if !ok {
		first, ok = p.starExpressionRest()
	}
	if !ok {
		return ex{}, false
	}
	if !p.isOp(',') {
		return first, true
	}
	return p.tupleRest(first, starItems), true
}

// itemRule names the rule of a sequence's items for tupleRest: a direct
// call costs less than a method value's.
type itemRule uint8

const (
	starNamedItems itemRule = iota // starNamedExpression
	starItems                      // starExpression
	targetItems                    // starTarget
)

// tupleRest reads ", item"* [","] after a first item and returns the tuple.
func (p *parser) tupleRest(first ex, item itemRule) ex {
	t := tupleOf(first)
	for p.op(',') {
		mark := p.pos
		var e ex
		var ok bool
		switch item {
		case starNamedItems:
			e, ok = p.starNamedExpression()
		case starItems:
			e, ok = p.starExpression()
		default:
			e, ok = p.starTarget()
		}
		if !ok {
			p.pos = mark
			break
		}
		t = t.add(e)
	}
	return t
}

// tupleOf starts a tuple (or list) whose first element is e.
func tupleOf(e ex) ex {
	t := ex{k: kTuple}
	return t.add(e)
}

// add records an element: the sequence is a target if every element is one.
func (t ex) add(e ex) ex {
	if t.store == kNone && e.store != kNone {
		t.store = e.store
	}
	if t.del == kNone {
		switch {
		case e.k == kStarred:
			t.del = kStarred
		case e.del != kNone:
			t.del = e.del
		}
	}
	return t
}

// starExpression: '*' bitwise_or | expression.
func (p *parser) starExpression() (ex, bool) {
	if p.mayEndAtom() {
		if e, ok := p.simpleAtom(); ok { // expression's fast path, before '*' (no atom)
			return e, true
		}
	}
	return p.starExpressionRest()
}

// starExpressionRest is starExpression once simpleAtom has refused the position.
func (p *parser) starExpressionRest() (ex, bool) {
	if p.isOp('*') {
		mark := p.pos
		p.pos++
		e, ok := p.bitwiseOr()
		if !ok {
			p.pos = mark
			return ex{}, false
		}
		return starred(e), true
	}
	return p.expressionRest()
}

// starred is *e: a target when e is one (and not itself starred).
func starred(e ex) ex {
	s := ex{k: kStarred, store: e.store, del: kStarred}
	if e.k == kStarred {
		s.store = kStarred
	}
	return s
}

// starNamedExpression: '*' bitwise_or | named_expression.
func (p *parser) starNamedExpression() (ex, bool) {
	// A simple atom is named_expression's answer (see namedExpression).
	if p.mayEndAtom() {
		if e, ok := p.simpleAtom(); ok {
			return e, true
		}
	}
	if p.isOp('*') {
		return p.starExpression()
	}
	return p.namedExpressionRest()
}

// walrusAt reports an unparenthesized assignment expression (NAME :=) at token i.
func (p *parser) walrusAt(i int) bool {
	return p.peekAt(i).Kind == Name && p.peekAt(i+1).isOp(opWalrus)
}

// namedExpression: NAME ':=' expression | expression !':='.
func (p *parser) namedExpression() (ex, bool) {
	// A simple atom is followed by none of ':=' (simpleAtom checks the
	// next token), so the rule's answer is expression's, which is
	// simpleAtom's; the look-ahead below would move far no further.
	if p.mayEndAtom() {
		if e, ok := p.simpleAtom(); ok {
			return e, true
		}
	}
	return p.namedExpressionRest()
}

// namedExpressionRest is namedExpression once simpleAtom has refused the
// position (it has no side effect then, so it is not tried again).
func (p *parser) namedExpressionRest() (ex, bool) {
	if t := p.next(); t.Kind == Name && !t.reserved() && p.peekAt(p.pos+1).isOp(opWalrus) {
		mark := p.pos
		p.pos += 2
		if _, ok := p.expression(); ok {
			return leaf(kNamedExpr), true
		}
		p.pos = mark
		return ex{}, false
	}
	e, ok := p.expressionRest()
	if !ok {
		return ex{}, false
	}
	if p.isOp(opWalrus) {
		return ex{}, p.fail("cannot use assignment expressions with " + e.k.name())
	}
	return e, true
}

// expression: disjunction 'if' disjunction 'else' expression | disjunction | lambdef.
func (p *parser) expression() (ex, bool) {
	if p.mayEndAtom() {
		if e, ok := p.simpleAtom(); ok {
			return e, true
		}
	}
	return p.expressionRest()
}

// expressionRest is expression once simpleAtom has refused the position.
// disjunction's recursion guard is taken here too: one call less on the
// path every expression takes, where a call costs more than the rules.
func (p *parser) expressionRest() (ex, bool) {
	if !p.enter() {
		return ex{}, false
	}
	var e ex
	ok := false
	switch {
	case p.isKw(kwLambda):
		e, ok = p.lambdef()
	case !p.enter():
		p.depth-- // as when the guard fails in a rule of its own
		return ex{}, false
	default:
		e, ok = p.climbIn(precOr)
		p.depth--
		if ok && p.isKw(kwIf) {
			e, ok = p.conditional(e)
		}
	}
	p.depth--
	return e, ok
}

// conditional reads 'if' disjunction 'else' expression after e, a
// disjunction: the conditional expression, or e alone when it does not
// follow.
func (p *parser) conditional(e ex) (ex, bool) {
	save := p.pos
	p.pos++
	if _, ok := p.disjunction(); ok && p.kw(kwElse) {
		if _, ok := p.expression(); ok {
			return leaf(kIfExp), true
		}
	}
	if p.failed() {
		return ex{}, false
	}
	p.pos = save
	return e, true
}

// simpleAtom is a fast path for the most common expression: a name, number
// or single string directly followed by a token that no expression rule can
// continue with. It returns false (consuming nothing) otherwise.
// Callers test mayEndAtom first.
//
// Its reads count for far only when it succeeds (the full rule reads the
// next token too, after the atom); when it fails, the full rule that follows
// reads what it reads.
func (p *parser) simpleAtom() (ex, bool) {
	if uint(p.pos) >= uint(len(p.toks)) { // unsigned: proves the index below
		return ex{}, false
	}
	t := &p.toks[p.pos]
	if p.pos+1 >= len(p.toks) && p.cut {
		return ex{}, false // the next token may be any: the full rule reads it
	}
	var e ex
	switch t.Kind {
	case Name:
		switch {
		case !t.reserved():
			e = ex{k: kName, single: true}
		case t.code == kwTrue:
			e = leaf(kTrueConst)
		case t.code == kwFalse:
			e = leaf(kFalseConst)
		case t.code == kwNone:
			e = leaf(kNoneConst)
		default:
			return ex{}, false
		}
	case Number:
		// checkNumber passes every literal of up to maxIntDigits bytes:
		// the call and the token's text only for longer ones.
		if t.end-t.start > maxIntDigits && checkNumber(p.text(*t), t.Line()) != nil {
			return ex{}, false
		}
		e = leaf(kLiteral)
	case String:
		if q := p.src[t.start]; (q == '"' || q == '\'') && t.code != strBackslash {
			e = leaf(kLiteral) // checkStrings' answer for a plain literal, without the call
			break
		}
		k, err := checkStrings(p.src, p.toks[p.pos:p.pos+1])
		if err != nil {
			return ex{}, false
		}
		e = leaf(k)
	default:
		return ex{}, false
	}
	p.pos++
	if p.pos >= len(p.toks) {
		p.pastEnd(p.pos)
	}
	return e, true
}

// mayEndAtom reports whether the token after the position ends a simple
// atom, or is past the end of the tokens. simpleAtom refuses the position
// otherwise, and most of the atoms it refuses are refused for this: the
// test is inlined in its callers, where the call would cost more.
func (p *parser) mayEndAtom() bool {
	i := p.pos + 1
	return uint(i) >= uint(len(p.toks)) || endsSimpleAtom[p.toks[i].code] // unsigned: no bounds check
}

// endsSimpleAtom marks the codes of the tokens that no expression rule
// continues with: the operators , ) ] } : = ; and the keywords but if, or,
// and, in, is and not (only operators and keywords have these codes; a
// name's or literal's code 0 is not marked, so "a" "b" stays one atom).
var endsSimpleAtom = func() (t [256]bool) {
	for _, c := range ",)]}:=;" {
		t[c] = true
	}
	for c := kwFalse; c <= kwExec; c++ {
		switch c {
		case kwIf, kwOr, kwAnd, kwIn, kwIs, kwNot:
		default:
			t[c] = true
		}
	}
	return t
}()

// lambdef: 'lambda' [lambda_params] ':' expression.
func (p *parser) lambdef() (ex, bool) {
	mark := p.pos
	p.pos++ // lambda
	if !p.isOp(':') && !p.params(true) {
		p.pos = mark
		return ex{}, false
	}
	if !p.op(':') {
		p.pos = mark
		return ex{}, false
	}
	if _, ok := p.expression(); !ok {
		p.pos = mark
		return ex{}, false
	}
	return leaf(kLambda), true
}

// The operator levels from disjunction down to power are parsed by
// precedence climbing, one loop for all of them:
//
//	1 or, 2 and, 3 not (prefix), 4 comparisons (chained), 5 |, 6 ^, 7 &,
//	8 << >>, 9 + -, 10 * / // % @, 11 unary + - ~ (prefix), 12 ** (right).
const (
	precOr      = 1
	precNot     = 3
	precCompare = 4
	precBitOr   = 5
	precUnary   = 11
)

// disjunction: conjunction ('or' conjunction)*.
func (p *parser) disjunction() (ex, bool) { return p.climb(precOr) }

// bitwiseOr: the binary operators | ^ & << >> + - * / // % @ and below.
func (p *parser) bitwiseOr() (ex, bool) { return p.climb(precBitOr) }

// climb parses an expression whose operators bind at least as tightly as min.
func (p *parser) climb(min int) (ex, bool) {
	if !p.enter() {
		return ex{}, false
	}
	e, ok := p.climbIn(min)
	p.depth--
	return e, ok
}

// climbIn is climb inside the recursion guard; the guard is left without a
// defer, which costs more than the rule on the common path.
func (p *parser) climbIn(min int) (ex, bool) {
	var e ex
	// The code alone tells an operator or a keyword (see codes.go).
	c := p.next().code
	switch {
	case c == kwNot && min <= precNot:
		// inversion: 'not' inversion
		mark := p.pos
		p.pos++
		if _, ok := p.climb(precNot); !ok {
			p.pos = mark
			return ex{}, false
		}
		e, c = leaf(kOperator), p.next().code
	case (c == '-' || c == '+' || c == '~') && min <= precUnary:
		// factor: ('+' | '-' | '~') factor
		mark := p.pos
		p.pos++
		if _, ok := p.climb(precUnary); !ok {
			p.pos = mark
			return ex{}, false
		}
		e, c = leaf(kOperator), p.next().code
	default:
		// power: await_primary ['**' factor]
		var ok bool
		if c == kwAwait {
			e, ok = p.awaitPrimary()
		} else {
			e, ok = p.primary()
		}
		if !ok {
			return ex{}, false
		}
		if c = p.next().code; c == opPow {
			mark := p.pos
			p.pos++
			if _, ok := p.climb(precUnary); ok {
				e = leaf(kOperator)
			} else {
				p.pos = mark
			}
			c = p.next().code
		}
	}
	// c is the code of the token at the position from here on: one read
	// of it for each test.
	for {
		// infix's answer from one look-up of the code, but for is and
		// not, which may take two tokens.
		prec, width := int(infixPrec[c]), 1
		if prec == precTwoTokens {
			prec, width = p.infix()
		}
		if prec == 0 || prec < min {
			return e, true
		}
		mark := p.pos
		p.pos += width
		// An operand that is a simple atom is climbIn(prec + 1)'s answer
		// (no unary operator, primary or binary operator follows it),
		// taken when the guard below would let the rule run.
		if p.depth < maxDepth && p.mayEndAtom() {
			if _, ok := p.simpleAtom(); ok {
				e = leaf(kOperator)
				if prec == precCompare {
					e = leaf(kCompare)
				}
				c = p.next().code
				continue
			}
		}
		// climb(prec + 1), its guard taken here.
		if !p.enter() {
			p.pos = mark
			return e, true
		}
		_, ok := p.climbIn(prec + 1)
		p.depth--
		if !ok {
			p.pos = mark // PEG: the operator is not part of the expression
			return e, true
		}
		e = leaf(kOperator)
		if prec == precCompare {
			e = leaf(kCompare)
		}
		c = p.next().code
	}
}

// infix reads the binary operator at the position: its precedence (0 for
// none) and how many tokens it takes (not in, is not take two).
func (p *parser) infix() (int, int) {
	t := p.next()
	if t.Kind == Name {
		switch t.code {
		case kwOr:
			return 1, 1
		case kwAnd:
			return 2, 1
		case kwIn:
			return precCompare, 1
		case kwIs:
			if n := p.peekAt(p.pos + 1); n.Kind == Name && n.code == kwNot {
				return precCompare, 2
			}
			return precCompare, 1
		case kwNot:
			if n := p.peekAt(p.pos + 1); n.Kind == Name && n.code == kwIn {
				return precCompare, 2
			}
		}
		return 0, 0
	}
	if t.Kind != Op {
		return 0, 0
	}
	return int(opPrecedence[t.code]), 1
}

// infixPrec is infix's precedence for each code, operators' and keywords'
// (only they have their codes), or precTwoTokens for is and not: infix
// reads the token after them.
var infixPrec = func() (t [256]uint8) {
	t = opPrecedence
	t[kwOr], t[kwAnd], t[kwIn] = 1, 2, precCompare
	t[kwIs], t[kwNot] = precTwoTokens, precTwoTokens
	return t
}()

// precTwoTokens marks is and not in infixPrec.
const precTwoTokens = 0xff

// opPrecedence is the precedence of each binary operator's code, 0 for a
// code that is none.
var opPrecedence = func() (t [256]uint8) {
	for _, c := range []byte{opEq, opNe, '<', opLe, '>', opGe} {
		t[c] = precCompare
	}
	t['|'], t['^'], t['&'], t[opShl], t[opShr] = 5, 6, 7, 8, 8
	t['+'], t['-'] = 9, 9
	for _, c := range []byte{'*', '/', opFloorDiv, '%', '@'} {
		t[c] = 10
	}
	return t
}()

// awaitPrimary: 'await' primary | primary.
func (p *parser) awaitPrimary() (ex, bool) {
	if p.isKw(kwAwait) {
		mark := p.pos
		p.pos++
		if _, ok := p.primary(); ok {
			return leaf(kAwait), true
		}
		p.pos = mark
		return ex{}, false
	}
	return p.primary()
}

// primary: atom followed by trailers: '.' NAME, a call, a genexp call, a subscript.
func (p *parser) primary() (ex, bool) {
	var e ex
	if t := p.next(); t.Kind == Name && !t.reserved() {
		// atom's answer for a name, the most common atom, without the call.
		p.pos++
		e = ex{k: kName, single: true}
	} else {
		var ok bool
		if e, ok = p.atom(); !ok {
			return ex{}, false
		}
	}
	for {
		switch p.next().code { // only an operator has these codes
		case '.':
			mark := p.pos
			p.pos++
			if !p.name() {
				p.pos = mark
				return e, true
			}
			e = ex{k: kAttribute, single: true}
		case '(':
			if !p.callTrailer() {
				return e, !p.failed()
			}
			e = leaf(kCall)
		case '[':
			mark := p.pos
			p.pos++
			if !p.slices() || !p.op(']') {
				p.pos = mark
				return e, !p.failed()
			}
			e = ex{k: kSubscript, single: true}
		default:
			return e, true
		}
	}
}

// callTrailer: '(' [arguments] ')', where a generator expression may be
// the only argument (CPython's primary genexp). Each argument is parsed once,
// so nested calls cost linear time.
func (p *parser) callTrailer() bool {
	mark := p.pos
	p.pos++ // (
	if p.op(')') {
		return true
	}
	if p.arguments(true) && p.op(')') {
		return true
	}
	p.pos = mark
	return false
}

// slices: slice !',' | ','.(slice | starred_expression)+ [','].
func (p *parser) slices() bool {
	if !p.sliceOrStarred() {
		return false
	}
	for p.isOp(',') {
		p.pos++
		if p.isOp(']') {
			break
		}
		if !p.sliceOrStarred() {
			return false
		}
	}
	return true
}

func (p *parser) sliceOrStarred() bool {
	if p.isOp('*') {
		mark := p.pos
		p.pos++
		if _, ok := p.expression(); ok {
			return true
		}
		p.pos = mark
		return false
	}
	return p.slice()
}

// slice: [expression] ':' [expression] [':' [expression]] | named_expression.
func (p *parser) slice() bool {
	if !p.isOp(':') {
		walrus := p.walrusAt(p.pos)
		_, ok := p.namedExpression()
		if !ok || !p.isOp(':') || walrus {
			return ok
		}
	}
	p.pos++ // ':'
	if p.startsExpression() && !p.isOp('*') {
		if _, ok := p.expression(); !ok {
			return false
		}
	}
	if p.op(':') && p.startsExpression() && !p.isOp('*') {
		if _, ok := p.expression(); !ok {
			return false
		}
	}
	return true
}

// atom: NAME, True, False, None, strings, NUMBER, a tuple, group or genexp, a
// list or listcomp, a dict, set or their comprehensions, '...'.
func (p *parser) atom() (ex, bool) {
	t := p.next()
	switch t.Kind {
	case Name:
		switch t.code {
		case kwTrue:
			p.pos++
			return leaf(kTrueConst), true
		case kwFalse:
			p.pos++
			return leaf(kFalseConst), true
		case kwNone:
			p.pos++
			return leaf(kNoneConst), true
		}
		if t.reserved() {
			return ex{}, false
		}
		p.pos++
		return ex{k: kName, single: true}, true
	case Number:
		if err := checkNumber(p.text(*t), t.Line()); err != nil {
			p.hard = err
			return ex{}, false
		}
		p.pos++
		return leaf(kLiteral), true
	case String:
		return p.strings()
	case Op:
		switch t.code {
		case '(', '[', '{':
			// A tuple, group or genexp, a list or listcomp, a dict, set or
			// their comprehensions, inside one recursion guard (the three
			// rules take it here: a call less per bracket).
			if !p.enter() {
				return ex{}, false
			}
			var e ex
			var ok bool
			switch t.code {
			case '(':
				e, ok = p.parenAtomIn()
			case '[':
				e, ok = p.listAtomIn()
			default:
				e, ok = p.braceAtomIn()
			}
			p.depth--
			return e, ok
		case opEllipsis:
			p.pos++
			return leaf(kEllipsis), true
		}
	}
	return ex{}, false
}

// strings: STRING+, checked as CPython's parser checks the literals.
func (p *parser) strings() (ex, bool) {
	start := p.pos
	for p.next().Kind == String {
		p.pos++
	}
	k, err := checkStrings(p.src, p.toks[start:p.pos])
	if err != nil {
		p.hard = err
		return ex{}, false
	}
	return leaf(k), true
}

// parenAtomIn: a tuple, a group or a generator expression; the first item is
// parsed once and what follows it decides which.
// It runs inside the recursion guard atom takes.
func (p *parser) parenAtomIn() (ex, bool) {
	mark := p.pos
	p.pos++ // (
	if p.op(')') {
		return ex{k: kTuple}, true // () is an (empty) target too
	}
	if p.isKw(kwYield) {
		// group: '(' yield_expr ')'
		if p.yieldExpr() && p.op(')') {
			return leaf(kYield), true
		}
		p.pos = mark
		return ex{}, false
	}
	first, ok := p.starNamedExpression()
	switch {
	case !ok:
	case p.isOp(','):
		// tuple: '(' star_named_expression ',' [star_named_expressions] ')'
		t := p.tupleRest(first, starNamedItems)
		if p.op(')') {
			return t, true
		}
	case first.k == kStarred:
		// (*a) is neither a group nor a generator expression
		if p.isOp(')') {
			p.fail("cannot use starred expression here")
		}
	case p.isKw(kwFor) || p.isKw(kwAsync):
		// genexp: '(' named_expression for_if_clauses ')'
		if p.forIfClauses() && p.op(')') {
			return leaf(kGenExp), true
		}
	case p.op(')'):
		// A group is its inner expression; a parenthesized single target
		// is still one (CPython's '(' single_target ')').
		return first, true
	}
	p.pos = mark
	return ex{}, false
}

// listAtomIn: '[' [star_named_expressions] ']' | '[' named_expression for_if_clauses ']'.
// It runs inside the recursion guard atom takes.
func (p *parser) listAtomIn() (ex, bool) {
	mark := p.pos
	p.pos++
	if p.op(']') {
		return ex{k: kList}, true
	}
	first, ok := p.starNamedExpression()
	if !ok {
		p.pos = mark
		return ex{}, false
	}
	if first.k != kStarred && (p.isKw(kwFor) || p.isKw(kwAsync)) {
		if p.forIfClauses() && p.op(']') {
			return leaf(kListComp), true
		}
		p.pos = mark
		return ex{}, false
	}
	l := tupleOf(first)
	l.k = kList
	if p.isOp(',') {
		l = p.tupleRest(first, starNamedItems)
		l.k = kList
	}
	if !p.op(']') {
		p.pos = mark
		return ex{}, false
	}
	return l, true
}

// braceAtomIn: a dict, set, dict comprehension or set comprehension; the
// first item is parsed once and what follows it decides which.
// It runs inside the recursion guard atom takes.
func (p *parser) braceAtomIn() (ex, bool) {
	mark := p.pos
	p.pos++
	if p.op('}') {
		return leaf(kDict), true
	}
	var first ex
	if !p.isOp(opPow) {
		var ok bool
		walrus := p.walrusAt(p.pos)
		if first, ok = p.starNamedExpression(); !ok {
			p.pos = mark
			return ex{}, false
		}
		if !p.isOp(':') {
			// set: '{' star_named_expressions '}' and setcomp: '{' named_expression for_if_clauses '}'
			if first.k != kStarred && (p.isKw(kwFor) || p.isKw(kwAsync)) {
				if p.forIfClauses() && p.op('}') {
					return leaf(kSetComp), true
				}
				p.pos = mark
				return ex{}, false
			}
			if p.isOp(',') {
				p.tupleRest(first, starNamedItems)
			}
			if !p.op('}') {
				p.pos = mark
				return ex{}, false
			}
			return leaf(kSet), true
		}
		// dict: the first key, a plain expression, then ':' and its value
		if first.k == kStarred || walrus {
			p.pos = mark
			return ex{}, false
		}
		p.pos++ // ':'
		if _, ok := p.expression(); !ok {
			p.pos = mark
			return ex{}, false
		}
		if p.isKw(kwFor) || p.isKw(kwAsync) {
			if p.forIfClauses() && p.op('}') {
				return leaf(kDictComp), true
			}
			p.pos = mark
			return ex{}, false
		}
		if !p.op(',') {
			if p.op('}') {
				return leaf(kDict), true
			}
			p.pos = mark
			return ex{}, false
		}
	}
	// the other items: '**' bitwise_or | expression ':' expression
	for !p.isOp('}') {
		if p.op(opPow) {
			if _, ok := p.bitwiseOr(); !ok {
				p.pos = mark
				return ex{}, false
			}
		} else if !p.kvpair() {
			p.pos = mark
			return ex{}, false
		}
		if !p.op(',') {
			break
		}
	}
	if p.op('}') {
		return leaf(kDict), true
	}
	p.pos = mark
	return ex{}, false
}

// kvpair: expression ':' expression.
func (p *parser) kvpair() bool {
	mark := p.pos
	if _, ok := p.expression(); ok && p.op(':') {
		if _, ok := p.expression(); ok {
			return true
		}
	}
	p.pos = mark
	return false
}

// forIfClauses: (['async'] 'for' star_targets 'in' disjunction ('if' disjunction)*)+.
func (p *parser) forIfClauses() bool {
	n := 0
	for {
		mark := p.pos
		p.kw(kwAsync)
		if !p.kw(kwFor) {
			p.pos = mark
			break
		}
		if _, ok := p.starTargets(); !ok || !p.kw(kwIn) {
			p.pos = mark
			break
		}
		if _, ok := p.disjunction(); !ok {
			p.pos = mark
			break
		}
		for p.isKw(kwIf) {
			m := p.pos
			p.pos++
			if _, ok := p.disjunction(); !ok {
				p.pos = m
				break
			}
		}
		n++
	}
	return n > 0 && !p.failed()
}

// arguments: args [','] &')'. A call (genexp set) may also take a bare
// generator expression as its only argument; a class statement may not.
func (p *parser) arguments(genexp bool) bool {
	// Positional items, then keywords and *x, then keywords and **x.
	seenKeyword, seenDoubleStar := false, false
	for {
		// One look at the next token for the tests below (isOp and
		// peek are the same read of it).
		t := p.next()
		switch {
		case t.code == opPow:
			mark := p.pos
			p.pos++
			if _, ok := p.expression(); !ok {
				p.pos = mark
				return false
			}
			seenDoubleStar = true
		case t.code == '*':
			if seenDoubleStar {
				return p.fail("iterable argument unpacking follows keyword argument unpacking")
			}
			mark := p.pos
			p.pos++
			if _, ok := p.expression(); !ok {
				p.pos = mark
				return false
			}
		case t.Kind == Name && p.peekAt(p.pos+1).isOp('='):
			if t.reserved() {
				return false
			}
			p.pos += 2
			if _, ok := p.expression(); !ok {
				return false
			}
			seenKeyword = true
		default:
			if seenDoubleStar {
				return p.fail("positional argument follows keyword argument unpacking")
			}
			if seenKeyword {
				return p.fail("positional argument follows keyword argument")
			}
			first := p.toks[p.pos-1].isOp('(')
			if _, ok := p.namedExpression(); !ok {
				return false
			}
			// One read of the next token for the tests (isKw and isOp
			// compare its code).
			switch p.next().code {
			case kwFor, kwAsync:
				// A bare generator expression must be the only argument.
				if genexp && first && p.forIfClauses() && p.isOp(')') {
					return true
				}
				if !genexp {
					return false // a class statement takes no generator expression
				}
				return p.fail("Generator expression must be parenthesized")
			case '=':
				return p.fail(`expression cannot contain assignment, perhaps you meant "=="?`)
			}
		}
		if c := p.next().code; c != ',' {
			return c == ')'
		}
		p.pos++
		if p.isOp(')') {
			return true
		}
	}
}

func (t *tok) isOp(c byte) bool { return t.code == c } // only an operator has an operator's code

// yieldExpr: 'yield' 'from' expression | 'yield' [star_expressions].
func (p *parser) yieldExpr() bool {
	mark := p.pos
	if !p.kw(kwYield) {
		return false
	}
	if p.kw(kwFrom) {
		if _, ok := p.expression(); ok {
			return true
		}
		p.pos = mark
		return false
	}
	if p.startsExpression() {
		if _, ok := p.starExpressions(); !ok {
			p.pos = mark
			return false
		}
	}
	return true
}

// startsExpression reports whether the next token can begin an expression.
func (p *parser) startsExpression() bool {
	t := p.next()
	switch t.Kind {
	case Name:
		switch t.code {
		case kwTrue, kwFalse, kwNone, kwNot, kwLambda, kwAwait:
			return true
		}
		return !t.reserved()
	case Number, String:
		return true
	case Op:
		switch t.code {
		case '(', '[', '{', '-', '+', '~', '*', opEllipsis:
			return true
		}
	}
	return false
}

// ---- targets ----

// starTargets: star_target !',' | star_target (',' star_target)* [','].
func (p *parser) starTargets() (ex, bool) {
	first, ok := p.starTarget()
	if !ok {
		return ex{}, false
	}
	if !p.isOp(',') {
		return first, true
	}
	return p.tupleRest(first, targetItems), true
}

// starTarget: '*' (!'*' star_target) | target_with_star_atom.
func (p *parser) starTarget() (ex, bool) {
	// A name followed by no trailer ('.', '(' or '['): the rule's answer
	// (a star_atom NAME, tPrimaryTarget having refused it), taken when
	// the guard below would let the rule run; far moves as there.
	if t := p.next(); t.Kind == Name && !t.reserved() && p.depth < maxDepth {
		if n := p.peekAt(p.pos + 1); n.code != '.' && n.code != '(' && n.code != '[' {
			p.pos++
			return ex{k: kName, single: true}, true
		}
	}
	if !p.enter() {
		return ex{}, false
	}
	e, ok := p.starTargetIn()
	p.depth--
	return e, ok
}

// starTargetIn is starTarget inside the recursion guard; the guard is left without a
// defer, which costs more than the rule on the common path.
func (p *parser) starTargetIn() (ex, bool) {
	if p.isOp('*') {
		mark := p.pos
		p.pos++
		if !p.isOp('*') {
			if e, ok := p.starTarget(); ok {
				return starred(e), true
			}
		}
		p.pos = mark
		return ex{}, false
	}
	return p.targetWithStarAtom()
}

// targetWithStarAtom: t_primary '.' NAME | t_primary '[' slices ']' (not
// followed by another trailer) | star_atom.
func (p *parser) targetWithStarAtom() (ex, bool) {
	mark := p.pos
	if e, ok := p.tPrimaryTarget(); ok {
		return e, true
	}
	if p.failed() {
		return ex{}, false
	}
	p.pos = mark
	switch {
	case p.name():
		return ex{k: kName, single: true}, true
	case p.isOp('('):
		p.pos++
		if p.op(')') {
			return ex{k: kTuple}, true
		}
		e, ok := p.starTargets()
		if ok && p.op(')') {
			if e.k == kStarred {
				break // (*a) is no target; (*a,) is
			}
			return e, true
		}
	case p.isOp('['):
		p.pos++
		if p.op(']') {
			return ex{k: kList}, true
		}
		e, ok := p.starTargets()
		if ok && p.op(']') {
			e.k = kList
			return e, true
		}
	}
	p.pos = mark
	return ex{}, false
}

// tPrimaryTarget reads an atom and trailers ending in an attribute or a subscript.
func (p *parser) tPrimaryTarget() (ex, bool) {
	mark := p.pos
	if _, ok := p.atom(); !ok {
		return ex{}, false
	}
	last := kNone
	for {
		switch {
		case p.isOp('.'):
			m := p.pos
			p.pos++
			if !p.name() {
				p.pos = m
				goto done
			}
			last = kAttribute
		case p.isOp('('):
			if !p.callTrailer() {
				goto done
			}
			last = kCall
		case p.isOp('['):
			m := p.pos
			p.pos++
			if !p.slices() || !p.op(']') {
				p.pos = m
				goto done
			}
			last = kSubscript
		default:
			goto done
		}
	}
done:
	if last != kAttribute && last != kSubscript || p.failed() {
		p.pos = mark
		return ex{}, false
	}
	return ex{k: last, single: true}, true
}

// ---- parameters ----

// params checks a def's parameter list (up to the ')') or a lambda's (up to
// the ':'): positional-only parameters before '/', parameters without a
// default before those with one, then '*' [NAME] or bare '*' followed by at
// least one keyword-only parameter, then '**' NAME last.
func (p *parser) params(lambda bool) bool {
	closer := byte(')')
	if lambda {
		closer = ':'
	}
	sawDefault, sawSlash := false, false
	for {
		switch {
		case p.isOp('/'):
			if sawSlash || p.pos == 0 || !p.toks[p.pos-1].isOp(',') || !lambda && p.toks[p.pos-2].isOp('(') || lambda && p.toks[p.pos-2].Kind == Name && p.toks[p.pos-2].code == kwLambda {
				return false
			}
			p.pos++
			sawSlash = true
			more, ok := p.nextParam(closer)
			if !ok {
				return false
			}
			if !more {
				return true
			}
			continue
		case p.isOp('*'):
			p.pos++
			bare := !p.isOp(',') && !p.isOp(closer)
			if bare && !p.param(lambda, true) {
				return false
			}
			if !bare && !p.isOp(',') {
				return p.fail("named arguments must follow bare *")
			}
			more, ok := p.nextParam(closer)
			if !ok {
				return false
			}
			keywordOnly := 0
			for more && !p.isOp(opPow) {
				if !p.param(lambda, false) {
					return false
				}
				if _, ok := p.defaultValue(); !ok {
					return false
				}
				keywordOnly++
				if more, ok = p.nextParam(closer); !ok {
					return false
				}
			}
			if !bare && keywordOnly == 0 {
				return p.fail("named arguments must follow bare *")
			}
			if more {
				return p.kwds(lambda, closer)
			}
			return true
		case p.isOp(opPow):
			return p.kwds(lambda, closer)
		}
		if !p.param(lambda, false) {
			return false
		}
		has, ok := p.defaultValue()
		if !ok {
			return false
		}
		if sawDefault && !has {
			return p.fail("non-default argument follows default argument")
		}
		sawDefault = sawDefault || has
		more, ok := p.nextParam(closer)
		if !ok {
			return false
		}
		if !more {
			return true
		}
	}
}

// param reads NAME and, in a def, an optional annotation (after '*', a
// starred one: *args: *Ts).
func (p *parser) param(lambda, star bool) bool {
	if !p.name() {
		return false
	}
	if !lambda && p.op(':') {
		if star && p.isOp('*') {
			mark := p.pos
			p.pos++
			if _, ok := p.bitwiseOr(); ok {
				return true
			}
			p.pos = mark
			return false
		}
		if _, ok := p.expression(); !ok {
			return false
		}
	}
	return true
}

// defaultValue reads an optional '=' expression: whether there was one, and
// whether it parsed.
func (p *parser) defaultValue() (bool, bool) {
	if !p.op('=') {
		return false, true
	}
	_, ok := p.expression()
	return true, ok
}

// nextParam moves past ',' (more is false when the closer follows) or stops
// before the closer; ok is false otherwise.
func (p *parser) nextParam(closer byte) (more, ok bool) {
	if p.op(',') {
		return !p.isOp(closer), true
	}
	return false, p.isOp(closer)
}

// kwds: '**' param, last.
func (p *parser) kwds(lambda bool, closer byte) bool {
	if !p.op(opPow) || !p.param(lambda, false) {
		return false
	}
	more, ok := p.nextParam(closer)
	return ok && !more
}

// ---- statements ----

// statementError is CPython's error for a logical line that statement
// refused: the line is parsed again to find the furthest token looked at
// (see reach), which errors need and the common path does without.
func (p *parser) statementError() *SyntaxError {
	p.far = reach(p.src, p.toks, p.endLine, 0, statementRule)
	return p.explain()
}

// statementRule is statement as a rule for reach.
func statementRule(p *parser) { p.statement() }

// statement checks one logical line. It returns the line's kind and whether
// it is a block header whose block follows on the next lines.
func (p *parser) statement() (stmtKind, bool, bool) {
	t := p.next()
	if t.Kind == Op && t.code == '@' {
		p.pos++
		if _, ok := p.namedExpression(); !ok || !p.atEnd() {
			return sDecorator, false, false
		}
		return sDecorator, false, true
	}
	if t.Kind == Name {
		switch t.code {
		case kwIf, kwElif, kwWhile:
			k := sIf
			switch t.code {
			case kwElif:
				k = sElif
			case kwWhile:
				k = sWhile
			}
			p.pos++
			if _, ok := p.namedExpression(); !ok {
				return k, false, false
			}
			return p.suite(k)
		case kwElse:
			p.pos++
			return p.suite(sElse)
		case kwTry:
			p.pos++
			return p.suite(sTry)
		case kwFinally:
			p.pos++
			return p.suite(sFinally)
		case kwExcept:
			p.pos++
			k := sExcept
			if p.op('*') {
				k = sExceptStar
			}
			if !p.isOp(':') || k == sExceptStar {
				if _, ok := p.expression(); !ok {
					return k, false, false
				}
				if p.kw(kwAs) && !p.name() {
					return k, false, false
				}
			}
			return p.suite(k)
		case kwFor:
			p.pos++
			return p.forHeader()
		case kwWith:
			p.pos++
			return p.withHeader()
		case kwDef:
			p.pos++
			return p.defHeader()
		case kwClass:
			p.pos++
			if !p.name() {
				return sClass, false, false
			}
			if p.op('(') && !p.op(')') {
				if !p.arguments(false) || !p.op(')') {
					return sClass, false, false
				}
			}
			return p.suite(sClass)
		case kwAsync:
			p.pos++
			switch {
			case p.kw(kwDef):
				return p.defHeader()
			case p.kw(kwFor):
				return p.forHeader()
			case p.kw(kwWith):
				return p.withHeader()
			}
			return sSimple, false, false
		case kwMatch:
			if k, block, ok := p.matchHeader(); ok {
				return k, block, true
			}
			if p.failed() {
				return sMatch, false, false
			}
			p.pos = 0
		case kwCase:
			// Only a match block holds case clauses; the caller checks
			// where this one stands.
			if k, block, ok := p.caseHeader(); ok {
				return k, block, true
			}
			if p.failed() {
				return sCase, false, false
			}
			p.pos = 0
		}
	}
	// simpleStatements, its first statement inline, and for a plain name
	// or no name first, simpleStatement's answer without its look at the
	// keywords: the common line costs no call for these rules.
	var ok bool
	if t.Kind != Name || t.code == kwNone0 {
		ok = p.assignmentOrExpression()
	} else {
		ok = p.simpleStatement()
	}
	switch {
	case !ok:
		return sSimple, false, false
	case p.atEnd():
		return sSimple, false, true
	case !p.op(';'):
		return sSimple, false, false
	case p.atEnd():
		return sSimple, false, true
	}
	return sSimple, false, p.simpleStatements()
}

// suite ends a header: ':' then either the end of the line (a block follows)
// or simple statements on the same line.
func (p *parser) suite(k stmtKind) (stmtKind, bool, bool) {
	if !p.op(':') {
		return k, false, false
	}
	if p.atEnd() {
		return k, true, true
	}
	return k, false, p.simpleStatements()
}

// forHeader: 'for' star_targets 'in' star_expressions ':'.
func (p *parser) forHeader() (stmtKind, bool, bool) {
	if _, ok := p.starTargets(); !ok || !p.kw(kwIn) {
		return sFor, false, false
	}
	if _, ok := p.starExpressions(); !ok {
		return sFor, false, false
	}
	return p.suite(sFor)
}

// withHeader: 'with' ( '(' with_item, ... [','] ')' | with_item, ... ) ':'.
func (p *parser) withHeader() (stmtKind, bool, bool) {
	mark := p.pos
	if p.op('(') {
		if p.withItems(true) && p.op(')') && p.isOp(':') {
			return p.suite(sWith)
		}
		if p.failed() {
			return sWith, false, false
		}
		p.pos = mark
	}
	if !p.withItems(false) {
		return sWith, false, false
	}
	return p.suite(sWith)
}

// withItems: ','.with_item+ (with a trailing comma when parenthesized).
func (p *parser) withItems(paren bool) bool {
	for {
		if _, ok := p.expression(); !ok {
			return false
		}
		if p.kw(kwAs) {
			if _, ok := p.starTarget(); !ok {
				return false
			}
			if !p.isOp(',') && !p.isOp(')') && !p.isOp(':') {
				return false
			}
		}
		if !p.op(',') {
			return true
		}
		if paren && p.isOp(')') {
			return true
		}
	}
}

// defHeader: 'def' NAME '(' [params] ')' ['->' expression] ':'.
func (p *parser) defHeader() (stmtKind, bool, bool) {
	if !p.name() || !p.op('(') {
		return sDef, false, false
	}
	if !p.op(')') {
		if !p.params(false) || !p.op(')') {
			return sDef, false, false
		}
	}
	if p.op(opArrow) {
		if _, ok := p.expression(); !ok {
			return sDef, false, false
		}
	}
	return p.suite(sDef)
}

// simpleStatements: simple_stmt (';' simple_stmt)* [';'] to the end of the line.
func (p *parser) simpleStatements() bool {
	for {
		if !p.simpleStatement() {
			return false
		}
		if p.atEnd() {
			return true
		}
		if !p.op(';') {
			return false
		}
		if p.atEnd() {
			return true
		}
	}
}

// simpleStatement checks one simple statement.
func (p *parser) simpleStatement() bool {
	t := p.next()
	if t.Kind == Name {
		switch t.code {
		case kwPass, kwBreak, kwContinue:
			p.pos++
			return true
		case kwReturn:
			p.pos++
			if p.startsExpression() {
				_, ok := p.starExpressions()
				return ok
			}
			return true
		case kwRaise:
			p.pos++
			if !p.startsExpression() {
				return true
			}
			if _, ok := p.expression(); !ok {
				return false
			}
			if p.kw(kwFrom) {
				_, ok := p.expression()
				return ok
			}
			return true
		case kwGlobal, kwNonlocal:
			p.pos++
			for {
				if !p.name() {
					return false
				}
				if !p.op(',') {
					return true
				}
			}
		case kwDel:
			p.pos++
			e, ok := p.starExpressions()
			if !ok || e.del != kNone || !p.atEnd() && !p.isOp(';') {
				return false
			}
			return true
		case kwAssert:
			p.pos++
			if _, ok := p.expression(); !ok {
				return false
			}
			if p.op(',') {
				_, ok := p.expression()
				return ok
			}
			return true
		case kwImport:
			p.pos++
			return p.dottedAsNames()
		case kwFrom:
			p.pos++
			return p.importFrom()
		case kwYield:
			return p.yieldExpr()
		}
	}
	return p.assignmentOrExpression()
}

// assignmentOrExpression: an expression statement, an (annotated,
// augmented, chained) assignment.
func (p *parser) assignmentOrExpression() bool {
	first, ok := p.starExpressions()
	if !ok {
		return false
	}
	switch t := p.next(); {
	case t.isOp(':'):
		// An annotation needs a single target: a name, attribute or subscript.
		if !first.single {
			return false
		}
		p.pos++
		if _, ok := p.expression(); !ok {
			return false
		}
		if p.op('=') {
			return p.rhs()
		}
		return true
	case t.Kind == Op && isAugAssign(t.code):
		if !first.single {
			return false
		}
		p.pos++
		return p.rhs()
	}
	target := first
	for p.isOp('=') {
		if target.store != kNone {
			return false
		}
		p.pos++
		if p.isKw(kwYield) {
			if !p.yieldExpr() {
				return false
			}
			target = leaf(kYield)
			continue
		}
		e, ok := p.starExpressions()
		if !ok {
			return false
		}
		target = e
	}
	return true
}

// rhs: yield_expr | star_expressions.
func (p *parser) rhs() bool {
	if p.isKw(kwYield) {
		return p.yieldExpr()
	}
	_, ok := p.starExpressions()
	return ok
}

// dottedAsNames: dotted_name ['as' NAME] (',' ...)*.
func (p *parser) dottedAsNames() bool {
	for {
		if !p.dottedName() {
			return false
		}
		if p.kw(kwAs) && !p.name() {
			return false
		}
		if !p.op(',') {
			return true
		}
	}
}

func (p *parser) dottedName() bool {
	if !p.name() {
		return false
	}
	for p.isOp('.') {
		p.pos++
		if !p.name() {
			return false
		}
	}
	return true
}

// importFrom: 'from' ('.' | '...')* dotted_name 'import' targets, or
// 'from' ('.' | '...')+ 'import' targets.
func (p *parser) importFrom() bool {
	dots := 0
	for p.isOp('.') || p.isOp(opEllipsis) {
		p.pos++
		dots++
	}
	if !p.isKw(kwImport) || dots == 0 {
		if !p.dottedName() {
			return false
		}
	}
	if !p.kw(kwImport) {
		return false
	}
	if p.op('*') {
		return true
	}
	paren := p.op('(')
	for {
		if !p.name() {
			return false
		}
		if p.kw(kwAs) && !p.name() {
			return false
		}
		if !p.op(',') {
			break
		}
		if paren && p.isOp(')') {
			break
		}
		if !paren && (p.atEnd() || p.isOp(';')) {
			return p.fail("trailing comma not allowed without surrounding parentheses")
		}
	}
	return !paren || p.op(')')
}

// ---- match statements ----

// matchHeader: "match" subject_expr ':' (the block of case clauses follows).
func (p *parser) matchHeader() (stmtKind, bool, bool) {
	mark := p.pos
	p.pos++ // match
	// subject_expr: star_named_expression ',' star_named_expressions? | named_expression
	first, ok := p.starNamedExpression()
	if ok && p.isOp(',') {
		p.tupleRest(first, starNamedItems)
	} else if ok && first.k == kStarred {
		ok = false
	}
	if ok && p.op(':') && p.atEnd() {
		return sMatch, true, true
	}
	p.pos = mark
	return sMatch, false, false
}

// caseHeader: "case" patterns [guard] ':' block.
func (p *parser) caseHeader() (stmtKind, bool, bool) {
	mark := p.pos
	p.pos++ // case
	if p.patterns() {
		if p.kw(kwIf) {
			if _, ok := p.namedExpression(); !ok {
				p.pos = mark
				return sCase, false, false
			}
		}
		if p.isOp(':') {
			return p.suite(sCase)
		}
	}
	p.pos = mark
	return sCase, false, false
}

// patterns: open_sequence_pattern | pattern.
func (p *parser) patterns() bool {
	star := p.isOp('*')
	if !p.maybeStarPattern() {
		return false
	}
	if !p.isOp(',') {
		return !star
	}
	for p.op(',') {
		if p.isOp(':') || p.isKw(kwIf) {
			break
		}
		if !p.maybeStarPattern() {
			return false
		}
	}
	return true
}

func (p *parser) maybeStarPattern() bool {
	if p.op('*') {
		return p.name() // *name or *_
	}
	return p.pattern()
}

// pattern: or_pattern ['as' capture target].
func (p *parser) pattern() bool {
	if !p.enter() {
		return false
	}
	ok := p.patternIn()
	p.depth--
	return ok
}

// patternIn is pattern inside the recursion guard.
func (p *parser) patternIn() bool {
	if !p.orPattern() {
		return false
	}
	if p.kw(kwAs) {
		return p.captureTarget()
	}
	return true
}

// captureTarget: a NAME other than _ not followed by '.', '(' or '='.
func (p *parser) captureTarget() bool {
	t := p.next()
	if t.Kind != Name || t.code == kwUnderscore || t.reserved() {
		return false
	}
	n := p.peekAt(p.pos + 1)
	if n.isOp('.') || n.isOp('(') || n.isOp('=') {
		return false
	}
	p.pos++
	return true
}

func (p *parser) orPattern() bool {
	for {
		if !p.closedPattern() {
			return false
		}
		if !p.op('|') {
			return true
		}
	}
}

// closedPattern: a literal, capture, wildcard, value, group, sequence,
// mapping or class pattern.
func (p *parser) closedPattern() bool {
	t := p.next()
	switch {
	case t.Kind == Number || t.isOp('-'):
		return p.numberPattern()
	case t.Kind == String:
		_, ok := p.strings() // f-strings too: the compiler, not the parser, refuses them
		return ok
	case t.Kind == Name && (t.code == kwNone || t.code == kwTrue || t.code == kwFalse):
		p.pos++
		return true
	case t.Kind == Name && !t.reserved():
		// capture, wildcard, value (dotted) or class pattern
		p.pos++
		dotted := false
		for p.isOp('.') {
			p.pos++
			if !p.name() {
				return false
			}
			dotted = true
		}
		if p.op('(') {
			return p.classPatternArgs()
		}
		if p.isOp('=') {
			return false
		}
		_ = dotted
		return true
	case t.isOp('('):
		// group '(' pattern ')' or sequence '(' [p, ...] ')'
		p.pos++
		if p.op(')') {
			return true
		}
		star := p.isOp('*')
		if !p.maybeStarPattern() {
			return false
		}
		if p.op(')') {
			return !star
		}
		for p.op(',') {
			if p.isOp(')') {
				break
			}
			if !p.maybeStarPattern() {
				return false
			}
		}
		return p.op(')')
	case t.isOp('['):
		p.pos++
		for !p.isOp(']') {
			if !p.maybeStarPattern() {
				return false
			}
			if !p.op(',') {
				break
			}
		}
		return p.op(']')
	case t.isOp('{'):
		return p.mappingPattern()
	}
	return false
}

// numberPattern: a signed number, or a complex literal real +/- imaginary.
func (p *parser) numberPattern() bool {
	neg := p.op('-')
	t := p.next()
	if t.Kind != Number {
		return false
	}
	if err := checkNumber(p.text(*t), t.Line()); err != nil {
		p.hard = err
		return false
	}
	p.pos++
	if p.isOp('+') || p.isOp('-') {
		if isImaginary(p.text(*t)) {
			return false
		}
		p.pos++
		im := p.next()
		if im.Kind != Number || !isImaginary(p.text(*im)) {
			return false
		}
		p.pos++
	}
	_ = neg
	return true
}

func isImaginary(number string) bool {
	return strings.HasSuffix(number, "j") || strings.HasSuffix(number, "J")
}

// mappingPattern: '{' (key: pattern, ...) [**rest] '}'.
func (p *parser) mappingPattern() bool {
	p.pos++ // {
	for !p.isOp('}') {
		if p.op(opPow) {
			if !p.captureTarget() {
				return false
			}
			p.op(',')
			return p.op('}')
		}
		if !p.mappingKey() || !p.op(':') || !p.pattern() {
			return false
		}
		if !p.op(',') {
			break
		}
	}
	return p.op('}')
}

// mappingKey: a literal (numbers, strings, None, True, False) or a dotted value.
func (p *parser) mappingKey() bool {
	t := p.next()
	switch {
	case t.Kind == Number || t.isOp('-'):
		return p.numberPattern()
	case t.Kind == String:
		_, ok := p.strings()
		return ok
	case t.Kind == Name && (t.code == kwNone || t.code == kwTrue || t.code == kwFalse):
		p.pos++
		return true
	case t.Kind == Name && !t.reserved():
		p.pos++
		if !p.isOp('.') {
			return false
		}
		for p.op('.') {
			if !p.name() {
				return false
			}
		}
		return true
	}
	return false
}

// classPatternArgs: the arguments of a class pattern after '(': positional
// patterns, then NAME=pattern keywords.
func (p *parser) classPatternArgs() bool {
	keyword := false
	for !p.isOp(')') {
		if p.next().Kind == Name && p.peekAt(p.pos+1).isOp('=') {
			if p.next().reserved() {
				return false
			}
			p.pos += 2
			keyword = true
			if !p.pattern() {
				return false
			}
		} else {
			if keyword || !p.pattern() {
				return false
			}
		}
		if !p.op(',') {
			break
		}
	}
	return p.op(')')
}

// ---- errors ----

// juxtaposed reports two expressions side by side where the parser
// stopped, as in f(a b): CPython's second pass then reads the second one
// (to suggest a missing comma), so it looks further than the first pass.
func (p *parser) juxtaposed() bool {
	i := p.far
	if i == 0 || i >= len(p.toks) {
		return false
	}
	prev, t := p.toks[i-1], p.toks[i]
	endsExpr := prev.Kind == Number || prev.Kind == String || prev.Kind == Name && (!prev.reserved() || prev.code == kwTrue || prev.code == kwFalse || prev.code == kwNone) ||
		prev.isOp(')') || prev.isOp(']') || prev.isOp('}')
	if !endsExpr || prev.Kind == Name && t.Kind == String {
		return false
	}
	q := &parser{src: p.src, toks: p.toks, pos: i}
	return q.startsExpression() && !t.isOp('*') && !t.isOp('-') && !t.isOp('+') && !t.isOp('~')
}

// juxtaposedReach is how far CPython's second pass reads when it looks at
// juxtaposed expressions (the furthest token index), or -1.
func (p *parser) juxtaposedReach() int {
	if p.hard != nil || !p.juxtaposed() {
		return -1
	}
	return reach(p.src, p.toks, p.endLine, p.far, func(q *parser) { q.expression() })
}

// bracketDepth is the bracket nesting before token i.
func (p *parser) bracketDepth(i int) int {
	depth := 0
	for _, t := range p.toks[:min(i, len(p.toks))] {
		if t.Kind == Op {
			switch t.code {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
			}
		}
	}
	return depth
}

// explain turns a line that does not parse into CPython's message: a few
// mistakes have their own; the rest is "invalid syntax" where the parser
// stopped.
func (p *parser) explain() *SyntaxError {
	if p.hard != nil {
		return p.hard
	}
	if p.hint != "" {
		return &SyntaxError{Line: p.hintLine, Msg: p.hint}
	}
	if msg := p.specificError(); msg != "" {
		return &SyntaxError{Line: p.lineOf(0), Msg: msg}
	}
	if p.juxtaposed() && p.bracketDepth(p.far) > 0 {
		return &SyntaxError{Line: p.lineOf(p.far), Msg: "invalid syntax. Perhaps you forgot a comma?"}
	}
	if k, ok := p.missingColon(); ok {
		return &SyntaxError{Line: p.lineOf(p.far), Msg: k}
	}
	return &SyntaxError{Line: p.lineOf(p.far), Msg: "invalid syntax"}
}

// specificError recognises the common mistakes CPython names.
func (p *parser) specificError() string {
	toks := p.toks
	if len(toks) >= 2 && toks[0].Kind == Name && (toks[0].code == kwPrint || toks[0].code == kwExec) &&
		(toks[1].Kind == Name && !toks[1].reserved() || toks[1].Kind == Number || toks[1].Kind == String) {
		name := p.text(toks[0])
		return fmt.Sprintf("Missing parentheses in call to '%s'. Did you mean %s(...)?", name, name)
	}
	q := &parser{src: p.src, toks: toks, endLine: p.endLine}
	if toks[0].Kind == Name && toks[0].code == kwDel {
		q.pos = 1
		if e, ok := q.starExpressions(); ok && e.del != kNone && (q.atEnd() || q.isOp(';')) {
			return "cannot delete " + e.del.name()
		}
		return ""
	}
	e, ok := q.starExpressions()
	if !ok || q.failed() {
		return ""
	}
	switch t := q.next(); {
	case t.isOp('=') && e.store != kNone:
		if e.k == kStarred && e.store == kStarred {
			return "cannot use starred expression here"
		}
		if e.k == kTuple || e.k == kList || e.k == kStarred {
			return "cannot assign to " + e.store.name()
		}
		return "cannot assign to " + e.store.name() + " here. Maybe you meant '==' instead of '='?"
	case t.isOp(':') && !e.single && e.k != kName:
		if e.k == kTuple || e.k == kList {
			return "only single target (not " + e.k.name() + ") can be annotated"
		}
		return "illegal target for annotation"
	case t.Kind == Op && isAugAssign(t.code) && !e.single:
		return fmt.Sprintf("'%s' is an illegal expression for augmented assignment", e.k.name())
	}
	return ""
}

// missingColon recognises a block header whose ':' (or a def's '(') is
// missing, as CPython names it: def, try, else and finally require the token
// at once; the other headers only when the line ends where ':' should be.
func (p *parser) missingColon() (string, bool) {
	q := &parser{src: p.src, toks: p.toks}
	q.kw(kwAsync)
	t := q.next()
	if t.Kind != Name {
		return "", false
	}
	q.pos++
	ok := false
	switch t.code {
	case kwTry, kwElse, kwFinally:
		return "expected ':'", !q.isOp(':')
	case kwDef:
		if !q.name() {
			return "", false
		}
		if !q.isOp('(') {
			return "expected '('", true
		}
		q.pos++
		if !q.op(')') && !(q.params(false) && q.op(')')) {
			return "", false
		}
		if q.op(opArrow) {
			if _, ok := q.expression(); !ok {
				return "", false
			}
		}
		return "expected ':'", !q.isOp(':') && !q.failed()
	case kwIf, kwElif, kwWhile:
		_, ok = q.namedExpression()
	case kwFor:
		_, ok = q.starTargets()
		if ok = ok && q.kw(kwIn); ok {
			_, ok = q.starExpressions()
		}
	case kwWith:
		ok = q.withItems(false)
	case kwClass:
		ok = q.name() && (!q.op('(') || q.op(')') || q.arguments(false) && q.op(')'))
	case kwExcept:
		ok = true
		if !q.atEnd() {
			_, ok = q.expression()
			if ok && q.kw(kwAs) {
				ok = q.name()
			}
		}
	case kwMatch:
		_, ok = q.starNamedExpression()
		if ok && q.isOp(',') {
			q.pos++
			q.tupleRest(ex{}, starNamedItems)
		}
	case kwCase:
		ok = q.patterns()
		if ok && q.kw(kwIf) {
			_, ok = q.namedExpression()
		}
	}
	if ok && q.atEnd() && !q.failed() {
		return "expected ':'", true
	}
	return "", false
}
