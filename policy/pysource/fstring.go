package pysource

import "fmt"

// fstringMaxNesting is CPython's MAXLEVEL for brackets in an f-string expression.
const fstringMaxNesting = 200

// checkFString checks the body of an f-string (between its quotes) as
// CPython 3.11 does: literal text with {{ and }} for braces, and replacement
// fields {expression[=][!conversion][:format_spec]} whose expression must
// parse as Python (wrapped in parentheses) and contain no backslash or '#';
// a format spec may hold one more level of fields.
func checkFString(body string, raw bool, line int) *SyntaxError {
	f := fstringChecker{s: body, raw: raw, line: line}
	_, err := f.parse(0, 0)
	return err
}

// fstringChecker holds what does not change while an f-string is read; the
// position goes in and out of each method, so nothing is allocated.
type fstringChecker struct {
	s    string
	raw  bool
	line int
}

func (f fstringChecker) errf(format string, args ...any) *SyntaxError {
	return &SyntaxError{Line: f.line, Msg: fmt.Sprintf(format, args...)}
}

func (f fstringChecker) at(i int) byte {
	if i < len(f.s) {
		return f.s[i]
	}
	return 0
}

// parse reads literals and fields until the end (level 0) or the '}' that
// closes a format spec (level 1).
func (f fstringChecker) parse(i, level int) (int, *SyntaxError) {
	for {
		var more bool
		var err *SyntaxError
		if i, more, err = f.literal(i, level); err != nil {
			return i, err
		}
		if more {
			continue // a doubled brace: the literal goes on
		}
		if i >= len(f.s) || f.s[i] == '}' {
			break
		}
		if i, err = f.field(i, level); err != nil {
			return i, err
		}
	}
	if level > 0 && f.at(i) != '}' {
		return i, f.errf("f-string: expecting '}'")
	}
	return i, nil
}

// literal reads text up to a '{' or '}' (a doubled one at level 0 is text:
// more is true and the scan resumes after it) and checks its escapes.
func (f fstringChecker) literal(i, level int) (next int, more bool, err *SyntaxError) {
	start := i
	end := len(f.s)
	backslash := false // checkEscapes has nothing to check without one
	for i < len(f.s) {
		if !literalStop[f.s[i]] {
			// A run of plain characters: the loop would take them one
			// by one, moving end along.
			j := i + 1
			for j < len(f.s) && !literalStop[f.s[j]] {
				j++
			}
			i, end = j, j
			continue
		}
		ch := f.s[i]
		i++
		backslash = backslash || ch == '\\'
		if !f.raw && ch == '\\' && i < len(f.s) {
			ch = f.s[i]
			i++
			if ch == 'N' {
				// \N{NAME}: its braces are not a field.
				if i < len(f.s) {
					i++
					if f.s[i-1] == '{' {
						for i < len(f.s) {
							i++
							if f.s[i-1] == '}' {
								break
							}
						}
					}
				}
				continue
			}
		}
		if ch == '{' || ch == '}' {
			if level == 0 {
				if f.at(i) == ch {
					end = i
					i++
					more = true
					break
				}
				if ch == '}' {
					return i, false, f.errf("f-string: single '}' is not allowed")
				}
			}
			i--
			end = i
			break
		}
		end = i
	}
	if !f.raw && start < end && backslash {
		if err := checkEscapes(f.s[start:end], false, f.line); err != nil {
			return i, false, err
		}
	}
	return i, more, nil
}

// literalStop marks the characters literal looks at: braces and the backslash.
var literalStop = func() (t [256]bool) {
	t['{'], t['}'], t['\\'] = true, true, true
	return t
}()

// field reads one replacement field, from its '{' to its '}'.
func (f fstringChecker) field(i, level int) (int, *SyntaxError) {
	if level >= 2 {
		return i, f.errf("f-string: expressions nested too deeply")
	}
	i++ // {
	if end, ok := f.nameField(i); ok {
		return end, nil
	}
	start := i
	var quote byte
	triple := false
	var stackBuf [8]byte
	stack := stackBuf[:0]
scan:
	for ; i < len(f.s); i++ {
		ch := f.s[i]
		if ch == '\\' {
			return i, f.errf("f-string expression part cannot include a backslash")
		}
		if quote != 0 {
			if ch == quote {
				if !triple {
					quote = 0
				} else if i+2 < len(f.s) && f.s[i+1] == ch && f.s[i+2] == ch {
					i += 2
					quote = 0
				}
			}
			continue
		}
		switch ch {
		case '\'', '"':
			triple = i+2 < len(f.s) && f.s[i+1] == ch && f.s[i+2] == ch
			if triple {
				i += 2
			}
			quote = ch
		case '[', '{', '(':
			if len(stack) >= fstringMaxNesting {
				return i, f.errf("f-string: too many nested parenthesis")
			}
			stack = append(stack, ch)
		case '#':
			return i, f.errf("f-string expression part cannot include '#'")
		case ']', '}', ')':
			if len(stack) == 0 {
				if ch == '}' {
					break scan
				}
				return i, f.errf("f-string: unmatched '%c'", ch)
			}
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if closerOf(open) != ch {
				return i, f.errf("f-string: closing parenthesis '%c' does not match opening parenthesis '%c'", ch, open)
			}
		case '!', ':', '=', '<', '>':
			if len(stack) > 0 {
				continue
			}
			if next := f.at(i + 1); i+1 < len(f.s) && next == '=' && ch != ':' {
				i++ // != == <= >=
				continue
			}
			if ch == '<' || ch == '>' {
				continue
			}
			break scan
		}
	}
	exprEnd := i
	if quote != 0 {
		return i, f.errf("f-string: unterminated string")
	}
	if len(stack) > 0 {
		return i, f.errf("f-string: unmatched '%c'", stack[len(stack)-1])
	}
	if i >= len(f.s) {
		return i, f.errf("f-string: expecting '}'")
	}
	if err := f.expression(f.s[start:exprEnd], f.at(i)); err != nil {
		return i, err
	}
	if f.s[i] == '=' {
		i++
		for i < len(f.s) && isASCIISpace(f.s[i]) {
			i++
		}
		if i >= len(f.s) {
			return i, f.errf("f-string: expecting '}'")
		}
	}
	if f.s[i] == '!' {
		i++
		if i >= len(f.s) {
			return i, f.errf("f-string: expecting '}'")
		}
		conv := f.s[i]
		i++
		if conv != 's' && conv != 'r' && conv != 'a' {
			return i, f.errf("f-string: invalid conversion character: expected 's', 'r', or 'a'")
		}
	}
	if f.at(i) == ':' && i < len(f.s) {
		i++
		if i >= len(f.s) {
			return i, f.errf("f-string: expecting '}'")
		}
		var err *SyntaxError
		if i, err = f.parse(i, level+1); err != nil {
			return i, err
		}
	}
	if i >= len(f.s) || f.s[i] != '}' {
		return i, f.errf("f-string: expecting '}'")
	}
	i++
	return i, nil
}

// nameField is the common field {name} or {name!r} (or !s, !a), the
// expression an ASCII name that is no keyword and the field read from i,
// after its '{': it returns the index after the '}'. For these the full
// reading of field finds the same end and no error (the name is a dotted
// name, which expression accepts); ok is false for any other field.
func (f fstringChecker) nameField(i int) (int, bool) {
	start := i
	for i < len(f.s) && identByte[f.s[i]] {
		i++
	}
	if i == start || isDigit(f.s[start]) || i >= len(f.s) || isKeyword(f.s[start:i]) {
		return 0, false
	}
	switch f.s[i] {
	case '}':
		i++
	case '!':
		if i+2 >= len(f.s) || f.s[i+2] != '}' || f.s[i+1] != 's' && f.s[i+1] != 'r' && f.s[i+1] != 'a' {
			return 0, false
		}
		i += 3
	default:
		return 0, false
	}
	return i, true
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// expression checks the text of a field's expression: not blank, and valid
// Python once wrapped in parentheses (CPython parses "(" + text + ")").
// stop is the character that ended the expression.
func (f fstringChecker) expression(text string, stop byte) *SyntaxError {
	blank := true
	for i := 0; i < len(text); i++ {
		if c := text[i]; c != ' ' && c != '\t' && c != '\n' && c != '\f' {
			blank = false
			break
		}
	}
	if blank {
		if stop == '!' || stop == ':' || stop == '=' {
			return f.errf("f-string: expression required before '%c'", stop)
		}
		return f.errf("f-string: empty expression not allowed")
	}
	if isDottedName(text) {
		return nil // the common {name} and {obj.attr}: nothing to parse
	}
	var toks []tok
	src := "(" + text + ")"
	err := scan(src, func(line []tok) error {
		for _, t := range line {
			if t.Kind != Newline && t.Kind != EOF && t.Kind != Indent && t.Kind != Dedent {
				t.line += int32(f.line - 1)
				toks = append(toks, t)
			}
		}
		return nil
	}, nil)
	if err != nil {
		// The outer parser meets this error while it builds the string: a
		// parser error to the tokenizer's override (see scan).
		se := err.(*SyntaxError)
		se.Line += f.line - 1
		se.class = parseErr
		return se
	}
	p := &parser{src: src, toks: toks, endLine: f.line}
	if _, ok := p.starExpressions(); ok && p.atEnd() && !p.failed() {
		return nil
	}
	if p.hard != nil {
		return p.hard
	}
	p.far = reach(src, toks, f.line, 0, func(q *parser) { q.starExpressions() })
	e := p.explain()
	e.Msg = "f-string: " + e.Msg
	return e
}

// isDottedName reports ASCII text (spaces around allowed) that is a name
// or a dotted name without keywords, which always parses.
func isDottedName(text string) bool {
	start := -1
	part := func(end int) bool {
		return start >= 0 && !isDigit(text[start]) && !isKeyword(text[start:end])
	}
	i := 0
	for i < len(text) && text[i] == ' ' {
		i++
	}
	end := len(text)
	for end > i && text[end-1] == ' ' {
		end--
	}
	if i == end {
		return false
	}
	for ; i < end; i++ {
		c := text[i]
		switch {
		case c == '_' || isASCIILetter(c) || isDigit(c):
			if start < 0 {
				start = i
			}
		case c == '.':
			if !part(i) {
				return false
			}
			start = -1
		default:
			return false
		}
	}
	return part(end)
}
