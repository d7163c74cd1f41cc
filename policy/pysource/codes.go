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
// then names that are keywords only in some places. They start at 0xa0,
// above every operator code, and no other token has a code (0) but a
// String with a backslash (strBackslash, a control character, which is no
// operator's): a token's code alone then tells an operator or a keyword,
// one compare (isOp, isKw).
// strBackslash is the code of a String token with a backslash in it: the
// lexer meets every one, so checkStrings need not look for them again.
const strBackslash = 0x01

const (
	kwNone0 = 0 // a plain identifier
	kwFalse = 0xa0 + iota - 1
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
	kwMatch = 0xa0 + iota - 2
	kwCase
	kwUnderscore
	kwPrint
	kwExec
)

// keywordCode is the code of a Name token's text: kwNone0 for a plain identifier.
func keywordCode(s string) byte {
	n := len(s)
	if n < 1 || n > 8 {
		return kwNone0
	}
	e := keywordTable[keywordHash(s[0], s[n-1], n)]
	if int(e.n) != n || s != keywords[e.code] {
		return kwNone0
	}
	return e.code
}

// keywordHash places every name with a code in a slot of its own of
// keywordTable, by its first and last byte and its length (the three tell
// all of them apart; TestKeywordTable checks the slots).
func keywordHash(first, last byte, n int) uint {
	return (uint(first)*2 + uint(last)*15 + uint(n)*25) & (keywordSlots - 1)
}

// keywordSlots is the size of keywordTable, a power of two.
const keywordSlots = 128

// keywordEntry is a name with a code: its length (0 for an empty slot) and
// its code.
type keywordEntry struct {
	n    uint8
	code byte
}

// keywords are the names with a code, at their code.
var keywords = [...]string{
	kwFalse: "False", kwNone: "None", kwTrue: "True", kwAnd: "and", kwAs: "as", kwAssert: "assert",
	kwAsync: "async", kwAwait: "await", kwBreak: "break", kwClass: "class", kwContinue: "continue",
	kwDef: "def", kwDel: "del", kwElif: "elif", kwElse: "else", kwExcept: "except", kwFinally: "finally",
	kwFor: "for", kwFrom: "from", kwGlobal: "global", kwIf: "if", kwImport: "import", kwIn: "in",
	kwIs: "is", kwLambda: "lambda", kwNonlocal: "nonlocal", kwNot: "not", kwOr: "or", kwPass: "pass",
	kwRaise: "raise", kwReturn: "return", kwTry: "try", kwWhile: "while", kwWith: "with", kwYield: "yield",
	kwMatch: "match", kwCase: "case", kwUnderscore: "_", kwPrint: "print", kwExec: "exec",
}

var keywordTable = func() (t [keywordSlots]keywordEntry) {
	for code, kw := range keywords {
		if kw == "" {
			continue
		}
		t[keywordHash(kw[0], kw[len(kw)-1], len(kw))] = keywordEntry{n: uint8(len(kw)), code: byte(code)}
	}
	return t
}()

// reserved reports a Name token that is one of Python's reserved words.
func (t *tok) reserved() bool { return t.code >= kwFalse && t.code <= kwLastReserved }
