package report

import (
	"fmt"
	"sort"
	"strings"
)

// MinSecretLen is the shortest secret miles-ci masks: masking a shorter one
// would destroy ordinary output (every "true", every "1234") and still leak
// it by where the *** fall, so a shorter value is refused before the run.
const MinSecretLen = 8

// Masker replaces every given secret value in text with ***, as GitHub
// masks secrets in a job log: the whole value, and each line of a value
// that has several. Every file miles-ci exports and every line it prints
// passes through one.
type Masker struct {
	values []string
}

// NewMasker checks the secrets (name → value; empty values are not given)
// and returns their masker, or an error naming a secret too short to mask.
func NewMasker(secrets map[string]string) (*Masker, error) {
	names := make([]string, 0, len(secrets))
	for name := range secrets {
		names = append(names, name)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	m := &Masker{}
	for _, name := range names {
		v := secrets[name]
		if v == "" {
			continue
		}
		parts := []string{v}
		if strings.ContainsAny(v, "\r\n") {
			parts = append(parts, strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' })...)
		}
		for _, p := range parts {
			if strings.TrimSpace(p) == "" {
				continue
			}
			if len(p) < MinSecretLen {
				return nil, fmt.Errorf("secret %s is (or has a line) shorter than %d characters, too short to mask in the results without destroying them; give the real value, or leave %s unset", name, MinSecretLen, name)
			}
			if !seen[p] {
				seen[p] = true
				m.values = append(m.values, p)
			}
		}
	}
	// Longest first, so a value that contains another is masked whole.
	sort.SliceStable(m.values, func(i, j int) bool { return len(m.values[i]) > len(m.values[j]) })
	return m, nil
}

// Mask returns text with every secret value replaced by ***; a nil masker
// masks nothing.
func (m *Masker) Mask(text string) string {
	if m == nil {
		return text
	}
	for _, v := range m.values {
		text = strings.ReplaceAll(text, v, "***")
	}
	return text
}

// Cap bounds text to limit bytes: the first and last parts are kept, and a
// visible note in between says how many bytes (and lines) were cut, so an
// output over its cap is shortened, never a reason to drop it.
func Cap(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	head := limit / 2
	tail := limit - head
	cut := text[head : len(text)-tail]
	return text[:head] + fmt.Sprintf("\n[miles-ci: %d bytes (%d lines) cut here; the first %d and the last %d bytes are kept]\n",
		len(cut), strings.Count(cut, "\n"), head, tail) + text[len(text)-tail:]
}
