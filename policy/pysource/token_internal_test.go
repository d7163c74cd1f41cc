package pysource

import (
	"math/rand"
	"testing"
)

// TestSkipPlainMatchesLoop checks skipPlain against the byte-by-byte scan
// it replaces, on strings of quotes, backslashes, newlines and letters.
func TestSkipPlainMatchesLoop(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := "ab'\"\\\n x"
	for n := 0; n < 20000; n++ {
		b := make([]byte, r.Intn(80))
		for i := range b {
			if r.Intn(8) == 0 {
				b[i] = alphabet[r.Intn(len(alphabet))]
			} else {
				b[i] = 'a' + byte(r.Intn(3))
			}
		}
		src := string(b)
		for _, q := range []byte{'\'', '"'} {
			stop := &stopDouble
			if q == '\'' {
				stop = &stopSingle
			}
			for i := 0; i <= len(src); i++ {
				want := i
				for want < len(src) && !stop[src[want]] {
					want++
				}
				if got := skipPlain(src, i, q, stop); got != want {
					t.Fatalf("skipPlain(%q, %d, %q) = %d, want %d", src, i, q, got, want)
				}
			}
		}
	}
}
