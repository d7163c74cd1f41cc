package deps

import "strings"

// The PR-body directive keys Miles CI reads (rules §6, §7).
const (
	KeyImageTag = "ci-image-tag"
	KeySGLang   = "ci-sglang-pr"
	KeyMegatron = "ci-megatron-pr"
)

// Directive is one PR-body line of the form "KEY: VALUE".
type Directive struct {
	// Key is the directive name without the colon, e.g. ci-sglang-pr.
	Key string `json:"key"`
	// Value is the first run of non-blank characters after the colon and blanks.
	Value string `json:"value"`
	// Line is the 1-based line number in the body.
	Line int `json:"line"`
}

// FindDirectives returns every line of body that matches the workflows'
// `grep -oP '^KEY:\s+\K\S+'`, in body order: the line starts with "KEY:" (no
// leading blank), one or more blanks follow, then the value runs to the next
// blank. Lines are split on '\n' only, so a trailing '\r' of a CRLF body ends
// the value like any other blank. Fenced code blocks are not special: the
// workflows read the body line by line and so does this.
func FindDirectives(body, key string) []Directive {
	var found []Directive
	prefix := key + ":"
	line := 0
	for rest := body; ; {
		line++
		text, next, more := strings.Cut(rest, "\n")
		if value, ok := directiveValue(text, prefix); ok {
			found = append(found, Directive{Key: key, Value: value, Line: line})
		}
		if !more {
			break
		}
		rest = next
	}
	return found
}

// FirstDirective returns the directive the workflows act on (grep -m1), and
// false when the body has none.
func FirstDirective(body, key string) (Directive, bool) {
	all := FindDirectives(body, key)
	if len(all) == 0 {
		return Directive{}, false
	}
	return all[0], true
}

// directiveValue applies `^PREFIX\s+(\S+)` to one line.
func directiveValue(line, prefix string) (string, bool) {
	if !strings.HasPrefix(line, prefix) {
		return "", false
	}
	rest := line[len(prefix):]
	i := 0
	for i < len(rest) && isBlank(rest[i]) {
		i++
	}
	if i == 0 {
		return "", false
	}
	j := i
	for j < len(rest) && !isBlank(rest[j]) {
		j++
	}
	if j == i {
		return "", false
	}
	return rest[i:j], true
}

// isBlank is PCRE's \s in the workflows' byte-oriented grep: space, \t, \n,
// \v, \f and \r.
func isBlank(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}
