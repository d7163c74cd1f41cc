package ghoutput

import (
	"io"
	"strings"

	"github.com/radixark/miles-ci/report"
)

// Plain makes text miles-ci prints on stdout, which holds what the checkout
// and the container wrote, safe for a GitHub Actions log and a terminal:
// each line's control characters but tabs are escaped, and a line
// the runner would read as a workflow command (::add-mask::, ::error::,
// ::stop-commands::, after any leading space, or ##[...] anywhere) is
// broken, so that no line of it is a command.
func Plain(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		body = report.EscapeControls(strings.ReplaceAll(body, "\r", `\r`))
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

// PlainWriter passes what is written to w through Plain (for the engine's
// progress on stderr, which shows what the run's commands print); each
// write should be whole lines, as a report.MaskingWriter passes them on.
type PlainWriter struct{ W io.Writer }

// Write passes p through Plain.
func (p PlainWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.W, Plain(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
