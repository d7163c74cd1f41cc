package ghoutput

import (
	"io"

	"github.com/radixark/miles-ci/internal/printable"
)

// Plain makes text miles-ci prints on stdout, which holds what the checkout
// and the container wrote, safe for a GitHub Actions log and a terminal
// (printable.Plain): no line of it is a workflow command or holds a
// terminal escape.
func Plain(text string) string { return printable.Plain(text) }

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
