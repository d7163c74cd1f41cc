// Package plural writes a count with its noun in the right number, so no
// output says "1 files".
package plural

import (
	"strconv"
	"strings"
)

// N is n and the noun, singular for 1 and plural otherwise: N(1, "file")
// is "1 file", N(2, "file") "2 files", N(0, "pass") "0 passes".
func N(n int, noun string) string {
	return strconv.Itoa(n) + " " + Noun(n, noun)
}

// Noun is the noun alone in the number n asks for.
func Noun(n int, noun string) string {
	if n == 1 {
		return noun
	}
	for _, end := range []string{"s", "x", "sh", "ch"} {
		if strings.HasSuffix(noun, end) {
			return noun + "es"
		}
	}
	return noun + "s"
}
