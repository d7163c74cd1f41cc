package report

import "github.com/radixark/miles-ci/internal/printable"

// Printable makes untrusted text one line a terminal shows as it is
// (printable.Line, the one function miles-ci escapes a field with).
func Printable(s string) string { return printable.Line(s) }

// EscapeControls is Printable for a multi-line message: line breaks and
// tabs are kept (printable.Text).
func EscapeControls(s string) string { return printable.Text(s) }
