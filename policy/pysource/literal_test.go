package pysource

import (
	"strconv"
	"testing"
)

// TestShortDecimalMatchesGeneral checks ParseNumber's fast path against the
// general one on the literals near its edges.
func TestShortDecimalMatchesGeneral(t *testing.T) {
	inputs := []string{"0", "00", "01", "1", "7", "10", "60", "999999999999999", "1000000000000000",
		"9007199254740993", "123456789012345", "1_0", "1e3", "1j", "0x10", "", "12a", "٣"}
	for n := uint64(1); n < 1e15; n = n*7 + 3 {
		inputs = append(inputs, strconv.FormatUint(n, 10))
	}
	for _, s := range inputs {
		got, gotErr := ParseNumber(s)
		want, wantErr := parseNumber(s)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("ParseNumber(%q) = %+v, %v; general path %+v, %v", s, got, gotErr, want, wantErr)
		}
	}
}

// TestJSONStringEscapesDEL: json.dumps (ensure_ascii) writes every character
// outside ' '..'~' as an escape, DEL (0x7f) included.
func TestJSONStringEscapesDEL(t *testing.T) {
	if got, want := JSONString("a\x7fb\u00e9"), `"a\u007fb\u00e9"`; got != want {
		t.Errorf("wanted %s, got %s", want, got)
	}
}
