package pysource

// NodeOf names the ast node class Python's parser gives an expression's
// tokens (Constant, List, Dict, UnaryOp, Tuple, Name, Call, BinOp, ...), as
// TopLevelCalls classifies a call's arguments: a reader of literals names
// what it refuses the way Python's ast would.
func NodeOf(toks []Token) string { return classify(toks, nil).Node }

// Matching is the index of the bracket that closes the one at open, or -1.
func Matching(toks []Token, open int) int { return matching(toks, open) }

// SplitTop splits tokens at the separator where no bracket is open.
func SplitTop(toks []Token, sep string) [][]Token { return splitTop(toks, sep) }

// StripParens removes the parentheses that wrap the whole token list (not
// those of a tuple).
func StripParens(toks []Token) []Token { return stripParens(toks) }
