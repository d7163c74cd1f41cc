// Package printable is the one way text that miles-ci did not write itself
// (what a test printed, a file name of the checkout, a reason read back from
// a results folder, a row of a history store, a host's answer) reaches a
// terminal or a GitHub Actions log. Line makes one field one line, Text
// keeps a message's line breaks, Plain makes a whole output safe line by
// line, and Writer is the writer every command's stdout and stderr pass
// through (cmd/miles-ci/cli.Run puts it there).
//
// Neutralised are: line breaks inside a field (a forged line of its own),
// ESC and every other C0 and C1 control character (terminal escapes, OSC
// titles, BEL, backspace), DEL and invalid UTF-8, the Unicode bidirectional
// controls and line separators (text that reads other than it is), and a
// line a GitHub Actions runner would take as a workflow command (::error::
// at a line's start, ##[group] anywhere). Text miles-ci writes holds none of
// them, so it passes byte for byte.
package printable

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line makes untrusted text (a file name, a skip reason, a note that quotes
// the container) one line that a terminal shows as it is: a line break is
// \n or \r, a tab \t, every other control character (ESC of a terminal
// escape, BEL, backspace, DEL, the C1 controls) and every invalid byte is
// \xNN or \u00NN, and a bidirectional control or line separator is
// \u202e, so it can neither start a line of its own (a workflow command
// such as ::add-mask::), move a terminal's cursor, nor reorder what is shown.
// What it returns is also text XML may hold (an SVG, a page).
func Line(s string) string { return escape(s, true) }

// Text is Line for a multi-line message: line breaks and tabs are kept,
// every other control character is escaped.
func Text(s string) string { return escape(s, false) }

// unsafe reports a rune Line escapes (breaks: line breaks and tabs too).
func unsafe(r rune, breaks bool) bool {
	switch {
	case r == '\n' || r == '\r' || r == '\t':
		return breaks
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError:
		return true
	case r == 0xfffe || r == 0xffff: // noncharacters, which XML (an SVG) may not hold
		return true
	}
	return isBidi(r)
}

// isBidi reports a Unicode bidirectional formatting character (the marks,
// embeddings, overrides and isolates that make text display in another
// order than it is read, CVE-2021-42574) or a line or paragraph separator.
func isBidi(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func escape(s string, breaks bool) string {
	clean := true
	for _, r := range s {
		if unsafe(r, breaks) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !unsafe(r, breaks) && !(r == utf8.RuneError && n <= 1):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default: // C1 controls, bidirectional controls, separators, U+FFFD itself
			if r == utf8.RuneError {
				b.WriteString(s[i : i+n])
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
		i += n
	}
	return b.String()
}

// Plain makes text miles-ci prints, which holds what the checkout and the
// container wrote, safe for a GitHub Actions log and a terminal: each
// line's control characters but tabs are escaped (Text, a carriage return
// as \r), and a line the runner would read as a workflow command
// (::add-mask::, ::error::, ::stop-commands::, after any leading space, or
// ##[...] anywhere) is broken, so that no line of it is a command.
func Plain(text string) string {
	if plainAlready(text) {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		body = Text(strings.ReplaceAll(body, "\r", `\r`))
		if trimmed := strings.TrimLeft(body, " \t"); strings.HasPrefix(trimmed, "::") {
			lead := body[:len(body)-len(trimmed)]
			body = lead + ": :" + trimmed[2:]
		}
		// The runner's older command form, ##[name ...], counts anywhere in a line.
		body = strings.ReplaceAll(body, "##[", `##\[`)
		if nl {
			body += "\n"
		}
		lines[i] = body
	}
	return strings.Join(lines, "")
}

// plainAlready reports text that Plain would leave as it is: no control
// character but line feeds and tabs, nothing Line escapes, no "::" after a
// line's leading blanks and no "##[". Most of what miles-ci prints is, so
// it costs one pass and no copy.
func plainAlready(text string) bool {
	start := true // at a line's start, past its leading blanks
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\n':
				start = true
			case c == ' ' || c == '\t':
			case c < 0x20 || c == 0x7f:
				return false
			case c == ':' && start && i+1 < len(text) && text[i+1] == ':':
				return false
			case c == '#' && strings.HasPrefix(text[i:], "##["):
				return false
			default:
				start = false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if unsafe(r, false) {
			return false
		}
		start = false
		i += n
	}
	return true
}
