package printable

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Writer is the one way a command's output reaches its terminal or log:
// every line written passes Plain once it is whole (a line not yet ended
// waits for its end, or Flush), so no text a command prints, whatever it
// quotes, is a workflow command or a terminal escape. What miles-ci means
// as a workflow command (an annotation it formatted, its message escaped),
// JSON it encoded and the live table's cursor moves go through Command,
// JSON and Control instead, which say so where they are called. It is safe
// for concurrent use.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	line []byte // the start of a line not yet ended
}

// NewWriter is a Writer onto w; w itself when it is one already.
func NewWriter(w io.Writer) *Writer {
	if pw, ok := w.(*Writer); ok {
		return pw
	}
	return &Writer{w: w}
}

// Unwrap is the writer underneath (a terminal's *os.File, say).
func (w *Writer) Unwrap() io.Writer { return w.w }

// Write passes every whole line of p through Plain; the rest waits.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	end := bytes.LastIndexByte(p, '\n')
	if end < 0 {
		w.line = append(w.line, p...)
		return len(p), nil
	}
	text := string(p[:end+1])
	if len(w.line) > 0 {
		text = string(w.line) + text
		w.line = w.line[:0]
	}
	w.line = append(w.line, p[end+1:]...)
	if _, err := io.WriteString(w.w, Plain(text)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a line not yet ended, through Plain.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flush()
}

func (w *Writer) flush() error {
	if len(w.line) == 0 {
		return nil
	}
	text := string(w.line)
	w.line = w.line[:0]
	_, err := io.WriteString(w.w, Plain(text))
	return err
}

// Command writes workflow commands miles-ci formatted itself
// (ghoutput.Annotation: its message escaped as the runner reads it back),
// each on a line of its own, as they are.
func (w *Writer) Command(commands string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w.w, commands)
	return err
}

// Control writes a terminal's control sequences miles-ci made itself (the
// live table's cursor moves) with text whose cells are already Line's, as
// they are.
func (w *Writer) Control(text string) error {
	return w.Command(text)
}

// JSON writes JSON miles-ci encoded (encoding/json escapes the C0 controls,
// U+2028 and U+2029): what is left that Plain would escape, DEL, the C1
// controls and the bidirectional controls, becomes a \u escape and "##[" is
// "##\u005b", all inside strings, so the JSON means the same and no line of
// it is a command.
func (w *Writer) JSON(data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w.w, SafeJSON(string(data)))
	return err
}

// SafeJSON is JSON as Writer.JSON writes it.
func SafeJSON(js string) string {
	if plainAlready(js) {
		return js
	}
	var b strings.Builder
	for i := 0; i < len(js); {
		r, n := utf8.DecodeRuneInString(js[i:])
		switch {
		case r == '#' && strings.HasPrefix(js[i:], "##["):
			b.WriteString(`##\u005b`)
			i += 3
			continue
		case r != utf8.RuneError && r != '\n' && r != '\t' && r != '\r' && unsafe(r, false):
			b.WriteString(`\u`)
			b.WriteString(hex4(r))
		default:
			b.WriteString(js[i : i+n])
		}
		i += n
	}
	return b.String()
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf]})
}
