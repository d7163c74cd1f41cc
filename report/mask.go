package report

import (
	"bytes"
	"fmt"
	"io"
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

// maxPendingBytes bounds what a masking writer holds of an unfinished line.
const maxPendingBytes = 64 << 10

// MaskingWriter is an io.Writer that masks what it passes on to w, line by
// line, so a secret split over two writes is still masked (the engine's
// progress, which shows what the run's commands print). Flush passes on
// what is left.
type MaskingWriter struct {
	w       io.Writer
	m       *Masker
	pending []byte
}

// NewMaskingWriter returns a writer that masks with m what it passes to w.
func NewMaskingWriter(w io.Writer, m *Masker) *MaskingWriter { return &MaskingWriter{w: w, m: m} }

// Write masks and passes on every whole line of p; an unfinished line waits
// for its end (beyond maxPendingBytes, all of it but the part that could be
// the start of a secret is passed on).
func (x *MaskingWriter) Write(p []byte) (int, error) {
	x.pending = append(x.pending, p...)
	var out string
	if cut := bytes.LastIndexByte(x.pending, '\n') + 1; cut > 0 {
		out = x.m.Mask(string(x.pending[:cut]))
		x.pending = append(x.pending[:0], x.pending[cut:]...)
	} else if len(x.pending) > maxPendingBytes {
		// Masked first; what could still be the start of a secret waits.
		masked := x.m.Mask(string(x.pending))
		keep := max(x.m.longest()-1, 0)
		out = masked[:len(masked)-keep]
		x.pending = append(x.pending[:0], masked[len(masked)-keep:]...)
	}
	if out != "" {
		if _, err := io.WriteString(x.w, out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush masks and passes on what is left.
func (x *MaskingWriter) Flush() error {
	if len(x.pending) == 0 {
		return nil
	}
	out := x.m.Mask(string(x.pending))
	x.pending = x.pending[:0]
	_, err := io.WriteString(x.w, out)
	return err
}

// longest is the length of the longest value masked.
func (m *Masker) longest() int {
	if m == nil || len(m.values) == 0 {
		return 0
	}
	return len(m.values[0])
}
