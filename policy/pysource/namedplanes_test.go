package pysource

import (
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/runenames"
)

// TestNamedPlanes: outside namedPlanes no code point has a name lookupName
// would know, so its table is the one a scan of every code point builds.
func TestNamedPlanes(t *testing.T) {
	in := func(r rune) bool {
		for _, p := range namedPlanes {
			if r >= p[0] && r < p[1] {
				return true
			}
		}
		return false
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if in(r) {
			continue
		}
		if n := runenames.Name(r); n != "" && n[0] != '<' {
			t.Fatalf("%U is named %q but lies outside namedPlanes", r, n)
		}
	}
}
