package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A small evaluator of GitHub Actions expressions (the text inside ${{ }}),
// enough for what Miles' stage jobs compute from the cadence: matrix sizes
// such as fromJSON(cadence == 'regular' && '[0]' || '[0,1]') and max-parallel
// such as cadence == 'weekly' && 1 || 2. It knows literals, property paths
// the caller binds, ! == != && || and parentheses, and fromJSON().

// maxExprLen bounds an expression; Miles' are under 200 characters.
const maxExprLen = 4096

// exprVars binds property paths such as needs.resolve-ci-policy.outputs.cadence.
type exprVars func(path string) (any, bool)

type exprParser struct {
	src  string
	pos  int
	vars exprVars
	// status answers the status functions always(), success(), failure()
	// and cancelled(); nil refuses them (a matrix size knows no job status).
	status func(name string) bool
	// statusUsed records that the expression calls a status function, so
	// that a job's if: without one gets GitHub's implicit success().
	statusUsed bool
	// depth bounds nesting so that a hostile expression cannot exhaust the stack.
	depth int
}

// evalExpr evaluates one expression. Values are string, float64, bool, nil or
// []any / map[string]any from fromJSON.
func evalExpr(src string, vars exprVars) (any, error) {
	if len(src) > maxExprLen {
		return nil, fmt.Errorf("expression longer than %d characters", maxExprLen)
	}
	p := &exprParser{src: src, vars: vars}
	v, err := p.or()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.src) {
		return nil, fmt.Errorf("unexpected %q at column %d", p.src[p.pos:], p.pos+1)
	}
	return v, nil
}

func (p *exprParser) space() {
	for p.pos < len(p.src) && strings.ContainsRune(" \t\r\n", rune(p.src[p.pos])) {
		p.pos++
	}
}

func (p *exprParser) eat(op string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.pos:], op) {
		p.pos += len(op)
		return true
	}
	return false
}

func (p *exprParser) or() (any, error) {
	l, err := p.and()
	for err == nil && p.eat("||") {
		var r any
		if r, err = p.and(); err == nil && !truthy(l) {
			l = r
		}
	}
	return l, err
}

func (p *exprParser) and() (any, error) {
	l, err := p.cmp()
	for err == nil && p.eat("&&") {
		var r any
		if r, err = p.cmp(); err == nil && truthy(l) {
			l = r
		}
	}
	return l, err
}

func (p *exprParser) cmp() (any, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	switch {
	case p.eat("=="):
		r, err := p.unary()
		return looseEqual(l, r), err
	case p.eat("!="):
		r, err := p.unary()
		return !looseEqual(l, r), err
	}
	return l, nil
}

func (p *exprParser) unary() (any, error) {
	if p.depth++; p.depth > 100 {
		return nil, fmt.Errorf("expression nested too deeply")
	}
	defer func() { p.depth-- }()
	p.space()
	if strings.HasPrefix(p.src[p.pos:], "!") && !strings.HasPrefix(p.src[p.pos:], "!=") {
		p.pos++
		v, err := p.unary()
		return !truthy(v), err
	}
	return p.primary()
}

func (p *exprParser) primary() (any, error) {
	p.space()
	if p.pos >= len(p.src) {
		return nil, fmt.Errorf("expression ends early")
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("missing ')'")
		}
		return v, nil
	case c == '\'':
		var b strings.Builder
		for p.pos++; p.pos < len(p.src); p.pos++ {
			if p.src[p.pos] == '\'' {
				if p.pos+1 < len(p.src) && p.src[p.pos+1] == '\'' {
					b.WriteByte('\'')
					p.pos++
					continue
				}
				p.pos++
				return b.String(), nil
			}
			b.WriteByte(p.src[p.pos])
		}
		return nil, fmt.Errorf("unterminated string")
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.pos
		for p.pos++; p.pos < len(p.src) && strings.ContainsRune("0123456789.xXabcdefABCDEF+-", rune(p.src[p.pos])); p.pos++ {
			if (p.src[p.pos] == '+' || p.src[p.pos] == '-') && (p.src[p.pos-1]|0x20) != 'e' {
				break
			}
		}
		f, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", p.src[start:p.pos])
		}
		return f, nil
	}
	start := p.pos
	for p.pos < len(p.src) && (isPathByte(p.src[p.pos])) {
		p.pos++
	}
	path := p.src[start:p.pos]
	if path == "" {
		return nil, fmt.Errorf("unexpected %q", p.src[p.pos:])
	}
	switch path {
	case "true", "false":
		return path == "true", nil
	case "null":
		return nil, nil
	}
	if p.eat("(") {
		var args []any
		if p.eat(")") {
			return p.callStatus(path)
		}
		for {
			arg, err := p.or()
			if err != nil {
				return nil, err
			}
			args = append(args, arg)
			if !p.eat(",") {
				break
			}
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("%s(): expected , or )", path)
		}
		return callFunc(path, args)
	}
	v, ok := p.vars(path)
	if !ok {
		return nil, fmt.Errorf("%s is not known before the run", path)
	}
	return v, nil
}

// statusFuncs are GitHub's job status check functions.
var statusFuncs = []string{"always", "success", "failure", "cancelled"}

// callStatus is a call with no argument: one of the status functions.
func (p *exprParser) callStatus(name string) (any, error) {
	for _, f := range statusFuncs {
		if strings.EqualFold(name, f) {
			if p.status == nil {
				return nil, fmt.Errorf("%s() is not known before the run", f)
			}
			p.statusUsed = true
			return p.status(f), nil
		}
	}
	return nil, fmt.Errorf("function %s() with no argument is not supported", name)
}

// EvalIf evaluates a job's if: as GitHub does: the text may be wrapped in
// ${{ }}; vars binds the contexts it reads (needs.J.result, github.*, ...);
// status answers always(), success(), failure() and cancelled(); and an
// expression that calls none of them is success() && (expression).
func EvalIf(cond string, vars func(path string) (any, bool), status func(name string) bool) (bool, error) {
	src := strings.TrimSpace(cond)
	if inner, ok := strings.CutPrefix(src, "${{"); ok {
		if inner, ok = strings.CutSuffix(inner, "}}"); ok && !strings.Contains(inner, "${{") {
			src = inner
		}
	}
	if strings.TrimSpace(src) == "" {
		return status("success"), nil
	}
	if len(src) > maxExprLen {
		return false, fmt.Errorf("expression longer than %d characters", maxExprLen)
	}
	p := &exprParser{src: src, vars: vars, status: status}
	v, err := p.or()
	if err == nil {
		if p.space(); p.pos != len(p.src) {
			err = fmt.Errorf("unexpected %q at column %d", p.src[p.pos:], p.pos+1)
		}
	}
	if err != nil {
		return false, err
	}
	if !p.statusUsed {
		return status("success") && truthy(v), nil
	}
	return truthy(v), nil
}

// EvalString evaluates every ${{ }} of a text (a with: input, a command
// line) and puts each value in its place as GitHub does; vars binds the
// contexts.
func EvalString(text string, vars func(path string) (any, bool)) (string, error) {
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, "${{")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		end := strings.Index(rest[i:], "}}")
		if end < 0 {
			return "", fmt.Errorf("an expression ${{ is never closed")
		}
		v, err := evalExpr(rest[i+3:i+end], vars)
		if err != nil {
			return "", err
		}
		b.WriteString(exprString(v))
		rest = rest[i+end+2:]
	}
}

// callFunc is one of the functions Miles' expressions use: fromJSON(s) and
// contains(array or string, value).
func callFunc(name string, args []any) (any, error) {
	switch {
	case strings.EqualFold(name, "fromJSON") && len(args) == 1:
		s, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("fromJSON() needs a string")
		}
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("fromJSON(%q): %v", s, err)
		}
		return v, nil
	case strings.EqualFold(name, "toJSON") && len(args) == 1:
		b, err := json.MarshalIndent(args[0], "", "  ")
		if err != nil {
			return nil, fmt.Errorf("toJSON(): %v", err)
		}
		return string(b), nil
	case strings.EqualFold(name, "startsWith") && len(args) == 2:
		return strings.HasPrefix(strings.ToLower(exprString(args[0])), strings.ToLower(exprString(args[1]))), nil
	case strings.EqualFold(name, "endsWith") && len(args) == 2:
		return strings.HasSuffix(strings.ToLower(exprString(args[0])), strings.ToLower(exprString(args[1]))), nil
	case strings.EqualFold(name, "contains") && len(args) == 2:
		// GitHub compares case-insensitively, as strings.
		want := strings.ToLower(exprString(args[1]))
		switch hay := args[0].(type) {
		case []any:
			for _, e := range hay {
				if strings.ToLower(exprString(e)) == want {
					return true, nil
				}
			}
			return false, nil
		default:
			return strings.Contains(strings.ToLower(exprString(hay)), want), nil
		}
	}
	return nil, fmt.Errorf("function %s() with %d argument(s) is not supported", name, len(args))
}

// exprString is a value as GitHub turns it into a string.
func exprString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func isPathByte(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c == '*' || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// truthy is GitHub's coercion to bool.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

// looseEqual is GitHub's ==: strings compare ignoring case; mixed types
// compare as numbers.
func looseEqual(a, b any) bool {
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok {
			return strings.EqualFold(as, bs)
		}
	}
	switch a.(type) {
	case []any, map[string]any:
		return false
	}
	switch b.(type) {
	case []any, map[string]any:
		return false
	}
	return toNumber(a) == toNumber(b)
}

func toNumber(v any) float64 {
	switch x := v.(type) {
	case nil:
		return 0
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	case string:
		if strings.TrimSpace(x) == "" {
			return 0
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}
