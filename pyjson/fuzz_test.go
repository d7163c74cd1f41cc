package pyjson

import (
	"testing"
	"unicode/utf8"
)

// FuzzDecode holds the decoder to never panic, and what it decodes to
// encode (json.dumps) to JSON that decodes again to the same encoding.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"\ud83d\ude00",null,true]}`, `[NaN, -Infinity]`, "\ufeff{}", `"\u12"`, `{"a":1,"a":2}`, "[" + "1e400" + "]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []Mode{Strict, Loose} {
			var v Value
			var err error
			if mode == Strict {
				var text []rune
				if text, err = ReadText(data); err != nil {
					continue
				}
				v, err = Decode(text, mode)
			} else {
				v, err = DecodeBytes(data, mode)
			}
			if err != nil {
				continue
			}
			out := Dumps(v, false)
			if !utf8.ValidString(out) {
				t.Fatalf("%q encodes to text that is not UTF-8: %q", data, out)
			}
			again, err := DecodeBytes([]byte(out), Loose)
			if err != nil || Dumps(again, false) != out {
				t.Fatalf("%q: its encoding %q does not decode to itself (%v)", data, out, err)
			}
			_ = Repr(v)
		}
	})
}
