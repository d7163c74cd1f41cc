package pysource

// Token codes. The lexer gives every operator and every keyword a one-byte
// code, so the grammar compares bytes instead of text: a one-character
// operator is its own character; a longer one is one of the op constants
// below, 0x80 and up (opAt reads them); a Name is kwNone0 unless it is a
// keyword or one of the names the grammar looks for (soft keywords, print
// and exec for CPython's hint).
const (
	opPowEq      = 0x80 + iota // **=
	opFloorDivEq               // //=
	opShrEq                    // >>=
	opShlEq                    // <<=
	opEllipsis                 // ...
	opNe                       // !=
	opModEq                    // %=
	opAndEq                    // &=
	opPow                      // **
	opMulEq                    // *=
	opAddEq                    // +=
	opSubEq                    // -=
	opArrow                    // ->
	opFloorDiv                 // //
	opDivEq                    // /=
	opWalrus                   // :=
	opShl                      // <<
	opLe                       // <=
	opEq                       // ==
	opGe                       // >=
	opShr                      // >>
	opMatMulEq                 // @=
	opXorEq                    // ^=
	opOrEq                     // |=
)

// isAugAssign reports an augmented assignment operator's code.
func isAugAssign(code byte) bool {
	switch code {
	case opPowEq, opFloorDivEq, opShrEq, opShlEq, opModEq, opAndEq, opMulEq, opAddEq, opSubEq, opDivEq, opMatMulEq, opXorEq, opOrEq:
		return true
	}
	return false
}

// Keyword codes of Name tokens: Python 3.11's reserved words first (isKw),
// then names that are keywords only in some places.
const (
	kwNone0 = iota // a plain identifier
	kwFalse
	kwNone
	kwTrue
	kwAnd
	kwAs
	kwAssert
	kwAsync
	kwAwait
	kwBreak
	kwClass
	kwContinue
	kwDef
	kwDel
	kwElif
	kwElse
	kwExcept
	kwFinally
	kwFor
	kwFrom
	kwGlobal
	kwIf
	kwImport
	kwIn
	kwIs
	kwLambda
	kwNonlocal
	kwNot
	kwOr
	kwPass
	kwRaise
	kwReturn
	kwTry
	kwWhile
	kwWith
	kwYield
	kwLastReserved = kwYield
	// Soft keywords and the names CPython's hints look at.
	kwMatch = iota
	kwCase
	kwUnderscore
	kwPrint
	kwExec
)

// keywordCode is the code of a Name token's text: kwNone0 for a plain identifier.
func keywordCode(s string) byte {
	if len(s) < 1 || len(s) > 8 || !keywordStart[s[0]] {
		return kwNone0
	}
	switch s {
	case "False":
		return kwFalse
	case "None":
		return kwNone
	case "True":
		return kwTrue
	case "and":
		return kwAnd
	case "as":
		return kwAs
	case "assert":
		return kwAssert
	case "async":
		return kwAsync
	case "await":
		return kwAwait
	case "break":
		return kwBreak
	case "class":
		return kwClass
	case "continue":
		return kwContinue
	case "def":
		return kwDef
	case "del":
		return kwDel
	case "elif":
		return kwElif
	case "else":
		return kwElse
	case "except":
		return kwExcept
	case "finally":
		return kwFinally
	case "for":
		return kwFor
	case "from":
		return kwFrom
	case "global":
		return kwGlobal
	case "if":
		return kwIf
	case "import":
		return kwImport
	case "in":
		return kwIn
	case "is":
		return kwIs
	case "lambda":
		return kwLambda
	case "nonlocal":
		return kwNonlocal
	case "not":
		return kwNot
	case "or":
		return kwOr
	case "pass":
		return kwPass
	case "raise":
		return kwRaise
	case "return":
		return kwReturn
	case "try":
		return kwTry
	case "while":
		return kwWhile
	case "with":
		return kwWith
	case "yield":
		return kwYield
	case "match":
		return kwMatch
	case "case":
		return kwCase
	case "_":
		return kwUnderscore
	case "print":
		return kwPrint
	case "exec":
		return kwExec
	}
	return kwNone0
}

// keywordStart marks the first bytes of the names keywordCode knows, so
// that most identifiers (self, x, HWBackend) are told apart at once.
var keywordStart = func() (t [256]bool) {
	for _, c := range "FNTabcdefgilmnoprtwy_" {
		t[c] = true
	}
	return t
}()

// reserved reports a Name token that is one of Python's reserved words.
func (t tok) reserved() bool { return t.Kind == Name && t.code != kwNone0 && t.code <= kwLastReserved }
