// Package midterm stands in for github.com/vito/midterm, a virtual terminal
// library that the Go module proxy does not serve. Dagger links it into its
// interactive progress display. This stand-in keeps the API Dagger uses and
// stores written text as plain lines; it interprets no escape sequences.
package midterm

import (
	"fmt"
	"io"
	"strings"
)

// Terminal is a stand-in virtual terminal that keeps written text as lines.
type Terminal struct {
	// Content holds one entry a line.
	Content [][]rune
	// AutoResizeX reports whether the width follows the longest line.
	AutoResizeX bool
	// SearchMatches are the matches of the last Search.
	SearchMatches []Match

	width   int
	current int
	query   string
	pending bool
}

// Match is one search hit.
type Match struct {
	Row, Col, Len int
}

// NewAutoResizingTerminal returns an empty terminal that grows with its content.
func NewAutoResizingTerminal() *Terminal { return &Terminal{AutoResizeX: true, current: -1} }

// Write appends p, starting a new line at each newline.
func (t *Terminal) Write(p []byte) (int, error) {
	s := strings.ReplaceAll(string(p), "\r\n", "\n")
	for i, part := range strings.Split(s, "\n") {
		if i > 0 {
			t.pending = false
		}
		if part == "" && i > 0 {
			t.Content = append(t.Content, nil)
			t.pending = true
			continue
		}
		if t.pending && len(t.Content) > 0 {
			t.Content[len(t.Content)-1] = append(t.Content[len(t.Content)-1], []rune(part)...)
		} else if part != "" || i > 0 {
			t.Content = append(t.Content, []rune(part))
		}
		t.pending = true
	}
	return len(p), nil
}

// UsedHeight is the number of lines written.
func (t *Terminal) UsedHeight() int {
	n := len(t.Content)
	for n > 0 && len(t.Content[n-1]) == 0 {
		n--
	}
	return n
}

// ResizeX sets the width.
func (t *Terminal) ResizeX(w int) { t.width = w }

// RenderLine writes line row.
func (t *Terminal) RenderLine(w io.Writer, row int) error {
	if row < 0 || row >= len(t.Content) {
		return nil
	}
	_, err := io.WriteString(w, string(t.Content[row]))
	return err
}

// RenderLineFgBg writes line row; colours are ignored.
func (t *Terminal) RenderLineFgBg(w io.Writer, row int, fg, bg any) {
	_ = t.RenderLine(w, row)
}

// Search finds query in every line and returns the number of matches.
func (t *Terminal) Search(query string) int {
	t.query = query
	t.SearchMatches = nil
	if query == "" {
		return 0
	}
	for row, l := range t.Content {
		line := string(l)
		off := 0
		for {
			i := strings.Index(line[off:], query)
			if i < 0 {
				break
			}
			t.SearchMatches = append(t.SearchMatches, Match{Row: row, Col: off + i, Len: len(query)})
			off += i + len(query)
		}
	}
	return len(t.SearchMatches)
}

// SearchClear forgets the last search.
func (t *Terminal) SearchClear() {
	t.query, t.SearchMatches, t.current = "", nil, -1
}

// SearchSetCurrent marks match i (or the last one for -1) as current and
// returns its row and column.
func (t *Terminal) SearchSetCurrent(i int) (int, int) {
	if len(t.SearchMatches) == 0 {
		return -1, -1
	}
	if i < 0 || i >= len(t.SearchMatches) {
		i = len(t.SearchMatches) - 1
	}
	t.current = i
	return t.SearchMatches[i].Row, t.SearchMatches[i].Col
}

// SearchMatchRows lists the rows with a match, once each.
func (t *Terminal) SearchMatchRows() []int {
	var rows []int
	for _, m := range t.SearchMatches {
		if len(rows) == 0 || rows[len(rows)-1] != m.Row {
			rows = append(rows, m.Row)
		}
	}
	return rows
}

// String returns the content.
func (t *Terminal) String() string {
	var b strings.Builder
	for _, l := range t.Content {
		fmt.Fprintln(&b, string(l))
	}
	return b.String()
}

// Format is a stand-in for a cell format.
type Format struct{}

// Render returns the escape sequence of the format; the stand-in has none.
func (Format) Render() string { return "" }

// Reset is the format that resets all attributes.
var Reset Format
