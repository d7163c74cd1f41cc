package pyjson

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

// oracle is a Python program that reads hex-encoded documents, one a line,
// and answers each as the script's load_json (strict) and json.loads of
// an API answer (loose) would.
const oracle = `
import io, json, sys
class Hook(Exception): pass
def pairs(ps):
    d = {}
    for k, v in ps:
        if k in d: raise Hook("duplicate JSON key: " + k)
        d[k] = v
    return d
def const(v): raise Hook("non-standard JSON number: " + v)
def show(f):
    try: return "ok " + json.dumps(f(), separators=(",", ":"))
    except Hook as e: return "hook " + ascii(str(e))
    except (UnicodeDecodeError, json.JSONDecodeError) as e: return "error " + ascii(str(e))
    except (RecursionError, ValueError) as e: return "crash"
for line in sys.stdin:
    b = bytes.fromhex(line.strip())
    strict = show(lambda: json.loads(io.TextIOWrapper(io.BytesIO(b), encoding="utf-8", newline=None).read(), object_pairs_hook=pairs, parse_constant=const))
    def loose():
        return json.loads(b.decode("utf-8"))
    print(strict + "\t" + show(loose))
`

func asciiOf(s string) string {
	// Python's ascii() of a str: repr with non-ASCII escaped.
	var b strings.Builder
	for _, r := range Runes(StrRepr(s)) {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r <= 0xff:
			b.WriteString(`\x` + hex.EncodeToString([]byte{byte(r)}))
		case r <= 0xffff:
			b.WriteString(`\u` + hex.EncodeToString([]byte{byte(r >> 8), byte(r)}))
		default:
			b.WriteString(`\U` + hex.EncodeToString([]byte{0, byte(r >> 16), byte(r >> 8), byte(r)}))
		}
	}
	return b.String()
}

func show(v Value, err error) string {
	var hook *HookError
	var crash *CrashError
	switch {
	case err == nil:
		return "ok " + Dumps(v, false)
	case errors.As(err, &hook):
		return "hook " + asciiOf(hook.Msg)
	case errors.As(err, &crash):
		return "crash"
	}
	return "error " + asciiOf(err.Error())
}

func answer(doc []byte) string {
	var strict string
	if text, err := ReadText(doc); err != nil {
		strict = show(Value{}, err)
	} else {
		strict = show(Decode(text, Strict))
	}
	loose := show(DecodeBytes(doc, Loose))
	if strings.HasPrefix(loose, "error ") {
		loose = "error" // the script reads every such error as "invalid JSON"
	}
	return strict + "\t" + loose
}

var pieces = []string{`{`, `}`, `[`, `]`, `,`, `:`, ` `, "\n", "\r", "\r\n", "\t", `"`, `"a"`, `"a"`, `"b"`,
	`\`, `\u`, `\ud800`, `\udc00`, `\u00e9`, `\n`, `\x`, `0`, `1`, `-`, `.`, `e`, `E`, `+`, `12`, `1.5`,
	`true`, `false`, `null`, `tru`, `NaN`, `Infinity`, `-Infinity`, "\x01", "\xc3\xa9", "\xff", "\xe2\x82",
	"\xed\xa0\x80", "\xef\xbb\xbf", `"x":`, `{"a":1,"a":2}`, `[1,2]`, `é`, "\u2028", `00`, `1e400`}

// TestDecodeMatchesPython compares the decoder with CPython's json module on
// generated documents (skipped where python3 is not on PATH).
func TestDecodeMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil || testing.Short() {
		t.Skip("needs python3")
	}
	rng := rand.New(rand.NewSource(41))
	var docs [][]byte
	for i := 0; i < 6000; i++ {
		var b bytes.Buffer
		for n := rng.Intn(12); n >= 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		docs = append(docs, b.Bytes())
	}
	docs = append(docs, []byte("["+strings.Repeat("9", 5000)+"]"))
	var in bytes.Buffer
	for _, d := range docs {
		in.WriteString(hex.EncodeToString(d) + "\n")
	}
	cmd := exec.Command(py, "-c", oracle)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(docs) {
		t.Fatalf("python answered %d lines for %d documents", len(lines), len(docs))
	}
	bad := 0
	for i, d := range docs {
		want := lines[i]
		if strict, loose, ok := strings.Cut(want, "\t"); ok && strings.HasPrefix(loose, "error ") {
			want = strict + "\terror"
		}
		if got := answer(d); got != want && bad < 20 {
			bad++
			t.Errorf("%q:\nwanted %s\ngot    %s", d, want, got)
		}
	}
}
