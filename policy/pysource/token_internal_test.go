package pysource

import (
	"math/bits"
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

// TestZeroBytes checks the word test against a byte-by-byte one: a mark
// for a word with a zero byte, the lowest one on the first zero byte.
func TestZeroBytes(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for n := 0; n < 200000; n++ {
		w := r.Uint64()
		for k := 0; k < 8; k++ {
			if r.Intn(6) == 0 {
				w &^= 0xff << (8 * k)
			} else if r.Intn(4) == 0 {
				w |= 0x80 << (8 * k)
			}
		}
		want := -1
		for k := 7; k >= 0; k-- {
			if byte(w>>(8*k)) == 0 {
				want = k
			}
		}
		got := -1
		if m := zeroBytes(w); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != want {
			t.Fatalf("zeroBytes(%#x): first zero byte %d, want %d", w, got, want)
		}
	}
}
