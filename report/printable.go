package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Printable makes untrusted text (a file name, a skip reason, a note that
// quotes the container) one line that a terminal shows as it is: a line
// break is \n or \r, and every other control character (ESC of a terminal
// escape, BEL, backspace, DEL, the C1 controls) and every invalid byte is
// \xNN or \u00NN, so it can neither start a line of its own (a workflow
// command such as ::add-mask::) nor move a terminal's cursor.
func Printable(s string) string { return escapeControls(s, true) }

// EscapeControls is Printable for a multi-line message: line breaks and
// tabs are kept, every other control character is escaped.
func EscapeControls(s string) string { return escapeControls(s, false) }

func escapeControls(s string, breaks bool) string {
	clean := true
	for _, r := range s {
		if r < 0x20 && (breaks || r != '\n' && r != '\r' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
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
		case !breaks && (r == '\n' || r == '\r' || r == '\t'):
			b.WriteRune(r)
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
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
