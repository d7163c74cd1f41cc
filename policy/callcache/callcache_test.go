package callcache

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/policy/pysource"
)

// sample is a test file's calls as the parser gives them, with every kind
// of value a registration argument can hold.
func sample(t testing.TB, src string) []pysource.Call {
	t.Helper()
	calls, err := pysource.TopLevelCalls(src, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

const sampleSource = `register_cuda_ci(60, "stage-c-4-gpu-h200", labels=["megatron", 'short'], hardware=["hopper"], nightly=True)
register_cpu_ci(est_time=1.5e3, suite="stage-a-cpu", disabled="flaky: #12", labels=[], *args, **kw)
register_rocm_ci(-7, b"x", None, ..., 10**400, 0x1f, [[1, [2]], (3,)], {"k": 1}, f"{x}", name)
`

// rec is the record of a file with these calls.
func rec(sum Sum, calls []pysource.Call) record { return record{sum, string(appendCalls(nil, calls))} }

// decode reads a whole cache file: its index and every record's calls.
func decode(data []byte, id string) (map[Sum][]pysource.Call, error) {
	entries, err := decodeIndex(string(data), id)
	if err != nil {
		return nil, err
	}
	out := map[Sum][]pysource.Call{}
	for s, e := range entries {
		if out[s], err = decodeCalls(e.body); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func TestEncodeDecodeGivesTheSameCalls(t *testing.T) {
	calls := sample(t, sampleSource)
	sum := sha256.Sum256([]byte(sampleSource))
	entries, err := decode(encode("id-1", []record{rec(sum, calls), rec(Sum{1}, nil)}), "id-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("wanted 2 entries, got %d", len(entries))
	}
	if got := entries[sum]; !reflect.DeepEqual(got, calls) {
		t.Errorf("wanted\n%#v\ngot\n%#v", calls, got)
	}
	if got := entries[Sum{1}]; len(got) != 0 {
		t.Errorf("wanted no calls, got %#v", got)
	}
}

func TestDecodeRefuses(t *testing.T) {
	good := encode("id-1", []record{rec(Sum{7}, sample(t, sampleSource))})
	cases := map[string][]byte{
		"another identity": encode("id-2", []record{rec(Sum{7}, nil)}),
		"no magic":         []byte("not a cache"),
		"empty":            nil,
		"cut short":        good[:len(good)-1],
		"trailing bytes":   append(append([]byte{}, good...), 0),
		"a huge count":     append([]byte(magic+"\x04id-1"), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"a duplicated sum": encode("id-1", []record{rec(Sum{7}, nil), rec(Sum{7}, nil)}),
		"a long varint":    append([]byte(magic+"\x04id-1"), 0x80, 0x00),
	}
	for name, data := range cases {
		if _, err := decode(data, "id-1"); err == nil {
			t.Errorf("%s: wanted a refusal", name)
		}
	}
	deep := pysource.Expr{Node: "List"}
	for range maxDepth + 2 {
		deep = pysource.Expr{Node: "List", Elems: []pysource.Expr{deep}}
	}
	data := encode("id-1", []record{rec(Sum{7}, []pysource.Call{{Func: "f", Args: []pysource.Arg{{Value: deep}}}})})
	if _, err := decode(data, "id-1"); err == nil {
		t.Errorf("wanted an expression deeper than %d refused", maxDepth)
	}
}

func TestCacheKeepsOneScansFiles(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	a, b := sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))
	calls := sample(t, sampleSource)

	c := Open(dir, root, "id-1")
	if _, ok := c.Calls(a); ok {
		t.Fatal("wanted an empty cache")
	}
	c.Keep(a, calls)
	c.Keep(b, nil)
	c.Done()

	c = Open(dir, root, "id-1")
	if got, ok := c.Calls(a); !ok || !reflect.DeepEqual(got, calls) {
		t.Fatalf("wanted the kept calls, got %v %#v", ok, got)
	}
	c.Done() // b was not found this time: dropped

	c = Open(dir, root, "id-1")
	if _, ok := c.Calls(b); ok {
		t.Error("wanted the entry of a file the last scan did not find dropped")
	}
	if _, ok := c.Calls(a); !ok {
		t.Error("wanted the entry of a file the last scan found kept")
	}
	if c := Open(dir, root, "id-2"); len(c.entries) != 0 {
		t.Error("wanted another identity's cache not read")
	}
	if c := Open(dir, t.TempDir(), "id-1"); len(c.entries) != 0 {
		t.Error("wanted another checkout's cache not read")
	}
}

func TestCacheThatCannotBeWritten(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := Open(filepath.Join(file, "calls"), t.TempDir(), "id-1") // under a file: no folder can be made
	c.Keep(Sum{1}, nil)
	c.Done() // no panic, no error: as if there were no cache
	if got, ok := c.Calls(Sum{1}); !ok || got != nil {
		t.Errorf("wanted the scan's own entry, got %v %v", got, ok)
	}
}

func TestTrimKeepsTheNewest(t *testing.T) {
	dir := t.TempDir()
	for i := range maxFiles + 5 {
		c := Open(dir, filepath.Join(t.TempDir(), fmt.Sprint(i)), "id-1")
		c.Keep(Sum{byte(i)}, nil)
		c.Done()
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(des) != maxFiles {
		t.Errorf("wanted %d caches kept, got %d", maxFiles, len(des))
	}
}

func TestOpenerOff(t *testing.T) {
	if Opener(func(k string) string { return map[string]string{"MILES_CI_CALL_CACHE": "off"}[k] }) != nil {
		t.Error("wanted MILES_CI_CALL_CACHE=off to turn the cache off")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encode("id", []record{rec(Sum{7}, sample(f, sampleSource))}))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := decode(data, "id")
		if err != nil {
			return
		}
		// What decodes encodes back to the same bytes.
		var records []record
		for s, calls := range entries {
			records = append(records, rec(s, calls))
		}
		if len(records) == 1 {
			if got := encode("id", records); string(got) != string(data) {
				t.Errorf("wanted %q encoded back, got %q", data, got)
			}
		}
	})
}

// BenchmarkOpen reads a cache of a Miles-sized checkout: 400 files of three
// calls each.
func BenchmarkOpen(b *testing.B) {
	dir, root := b.TempDir(), b.TempDir()
	c := Open(dir, root, "id")
	calls := sample(b, sampleSource)
	for i := range 400 {
		c.Keep(sha256.Sum256(fmt.Append(nil, i)), calls)
	}
	c.Done()
	for b.Loop() {
		if c := Open(dir, root, "id"); len(c.entries) != 400 {
			b.Fatal(len(c.entries))
		}
	}
}

func FuzzDecodeCalls(f *testing.F) {
	for _, src := range strings.Split(sampleSource, "\n") {
		f.Add(appendCalls(nil, sample(f, src)))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		calls, err := decodeCalls(string(body))
		if err != nil {
			return
		}
		// What decodes encodes back to the same bytes.
		if got := appendCalls(nil, calls); string(got) != string(body) {
			t.Errorf("wanted %q encoded back, got %q", body, got)
		}
	})
}
