package printable

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tests/e2e/test_a.py", "tests/e2e/test_a.py"},
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"\x1b]0;title\x07\x1b[2J", `\x1b]0;title\x07\x1b[2J`},
		{"del\x7f c1\u0085\u009b", `del\x7f c1\u0085\u009b`},
		{"bad \xff byte", `bad \xff byte`},
		{"evil\u202egp.py", `evil\u202egp.py`},
		{"\u2066iso\u2069 \u200fmark\u200e \u061c", `\u2066iso\u2069 \u200fmark\u200e \u061c`},
		{"sep\u2028line\u2029", `sep\u2028line\u2029`},
		{"non\ufffechar\uffff", `non\ufffechar\uffff`},
		{"kept: é 中文 \ufffd", "kept: é 中文 \ufffd"},
	} {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q): wanted %q, got %q", c.in, c.want, got)
		}
	}
	if got := Text("two\nlines\twith\x1b[31m"); got != "two\nlines\twith\\x1b[31m" {
		t.Errorf("Text: wanted the breaks and tabs kept, got %q", got)
	}
}

// TestPlain checks no line of Plain's is a workflow command or holds a
// control character, and that text miles-ci writes passes as it is.
func TestPlain(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text\n  indented: a::b\n", "plain text\n  indented: a::b\n"},
		{"::error::x\n  ::warning::y\nfine\n", ": :error::x\n  : :warning::y\nfine\n"},
		{"a ##[group]b\n", "a ##\\[group]b\n"},
		{"cr\r\n\x1b[2J\u202e\n", "cr\\r\n\\x1b[2J\\u202e\n"},
		{"tab\tkept\n", "tab\tkept\n"},
	} {
		if got := Plain(c.in); got != c.want {
			t.Errorf("Plain(%q): wanted %q, got %q", c.in, c.want, got)
		}
		if again := Plain(Plain(c.in)); again != Plain(c.in) {
			t.Errorf("Plain is not idempotent on %q: %q", c.in, again)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	if NewWriter(w) != w {
		t.Errorf("wanted a Writer onto a Writer to be itself")
	}
	// A command split over writes is still a line's start when whole.
	io := []string{"  :", ":error::forged\nnext ", "line\x1b[2J", "\n"}
	for _, s := range io {
		w.Write([]byte(s))
	}
	w.Command("::error::miles-ci's own\n")
	w.Write([]byte("partial"))
	w.Flush()
	want := "  : :error::forged\nnext line\\x1b[2J\n::error::miles-ci's own\npartial"
	if b.String() != want {
		t.Errorf("wanted %q, got %q", want, b.String())
	}
}

// TestSafeJSON checks JSON through the writer means what it meant, holds
// no raw DEL, C1 or bidirectional control, and no ##[.
func TestSafeJSON(t *testing.T) {
	in := map[string]string{"file": "a\x7f\u0085\u202e##[group]\u2028\n::error::x", "plain": "tests/x.py"}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(in); err != nil {
		t.Fatal(err)
	}
	got := SafeJSON(buf.String())
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["file"] != in["file"] || back["plain"] != in["plain"] {
		t.Errorf("wanted the same JSON value back, got %v (%v) from %s", back, err, got)
	}
	if Plain(got) != got || strings.Contains(got, "##[") {
		t.Errorf("wanted JSON with nothing Plain escapes, got %q", got)
	}
	if plain := `{"a": "b"}` + "\n"; SafeJSON(plain) != plain {
		t.Errorf("wanted plain JSON as it is")
	}
}

// TestLineIsXMLText checks what Line returns is text XML may hold (the
// history chart's SVG, issue 38 item 11).
func TestLineIsXMLText(t *testing.T) {
	var s strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		s.WriteRune(r)
	}
	s.WriteString("\ufffe\uffff\xff\xc0")
	doc := "<t>" + strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(Line(s.String())) + "</t>"
	var v struct {
		XMLName xml.Name `xml:"t"`
		Text    string   `xml:",chardata"`
	}
	if err := xml.Unmarshal([]byte(doc), &v); err != nil {
		t.Errorf("wanted text XML can hold, got %v", err)
	}
}

func FuzzPlain(f *testing.F) {
	f.Add("::error::x\n##[group]\x1b[2J\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := Plain(s)
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, " \t"), "::") || strings.Contains(l, "##[") {
				t.Fatalf("a workflow command got through: %q", l)
			}
			for _, r := range l {
				if r != '\t' && unsafe(r, false) && r != 0xfffd {
					t.Fatalf("a control character got through: %q", l)
				}
			}
		}
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("wanted the lines kept, got %q from %q", out, s)
		}
	})
}
