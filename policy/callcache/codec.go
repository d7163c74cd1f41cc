package callcache

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// The cache file is
//
//	magic, identity (a string), n (a uvarint), n records
//	record: sum (32 bytes), the length of its calls (a uvarint), calls
//	calls:  a count, then each call
//	call:   func (string), line, args (count, then each arg)
//	arg:    kind, keyword (string), line, start, end, value (expr)
//	expr:   node (string), const flag (0 or 1) [const], elems (count, then each expr)
//	const:  type (string), num (8 bytes, IEEE 754), overflow, str (string), bool
//
// with every integer a uvarint and every string its length (a uvarint) and
// bytes. Open reads only the records' sums and lengths; a record's calls
// are decoded when a file with that sum is found, by the worker that reads
// the file, so the scan's workers share the work. Every count is checked
// against the bytes left and an expression's depth against maxDepth, so a
// damaged file costs no more than its size to refuse.
const magic = "miles-ci call cache 3\n"

// maxDepth bounds a kept expression's nesting (a list of lists ...): an
// argument deeper than this is no registration Miles accepts.
const maxDepth = 64

// record is one file's entry: the hash of its text and its calls, encoded
// (appendCalls).
type record struct {
	sum  Sum
	body string
}

func encode(id string, records []record) []byte {
	b := []byte(magic)
	b = appendString(b, id)
	b = appendUvarint(b, uint64(len(records)))
	for _, r := range records {
		b = append(b, r.sum[:]...)
		b = appendString(b, r.body)
	}
	return b
}

func appendCalls(b []byte, calls []pysource.Call) []byte {
	b = appendUvarint(b, uint64(len(calls)))
	for _, c := range calls {
		b = appendString(b, c.Func)
		b = appendUvarint(b, uint64(c.Line))
		b = appendUvarint(b, uint64(len(c.Args)))
		for _, a := range c.Args {
			b = appendUvarint(b, uint64(a.Kind))
			b = appendString(b, a.Keyword)
			b = appendUvarint(b, uint64(a.Line))
			b = appendUvarint(b, uint64(a.Start))
			b = appendUvarint(b, uint64(a.End))
			b = appendExpr(b, a.Value)
		}
	}
	return b
}

func appendExpr(b []byte, e pysource.Expr) []byte {
	b = appendString(b, e.Node)
	if e.Const == nil {
		b = append(b, 0)
	} else {
		k := e.Const
		b = append(b, 1)
		b = appendString(b, k.Type)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(k.Num))
		b = appendBool(b, k.Overflow)
		b = appendString(b, k.Str)
		b = appendBool(b, k.Bool)
	}
	b = appendUvarint(b, uint64(len(e.Elems)))
	for _, el := range e.Elems {
		b = appendExpr(b, el)
	}
	return b
}

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendString(b []byte, s string) []byte {
	return append(appendUvarint(b, uint64(len(s))), s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// decodeIndex reads a cache file written by encode for identity id: each
// record's sum and its calls, still encoded (see decodeCalls).
func decodeIndex(data string, id string) (map[Sum]*entry, error) {
	if !strings.HasPrefix(data, magic) {
		return nil, errFormat
	}
	r := reader{b: data[len(magic):]}
	if got := r.str(); r.bad || got != id {
		return nil, errFormat
	}
	n := r.count(sumSize + 1)
	entries := make(map[Sum]*entry, n)
	for i := 0; i < n && !r.bad; i++ {
		var s Sum
		copy(s[:], r.take(sumSize))
		body := r.take(r.count(1))
		if _, dup := entries[s]; dup {
			r.bad = true
		}
		entries[s] = &entry{body: body}
	}
	if r.bad || len(r.b) != 0 {
		return nil, errFormat
	}
	return entries, nil
}

// decodeCalls reads a record's calls. Their strings are substrings of body
// (so of the file's text, which the cache keeps): no copy each.
func decodeCalls(body string) ([]pysource.Call, error) {
	r := reader{b: body}
	calls := make([]pysource.Call, r.count(3))
	for j := range calls {
		c := &calls[j]
		c.Func, c.Line = r.str(), r.int()
		c.Args = make([]pysource.Arg, r.count(8))
		for k := range c.Args {
			a := &c.Args[k]
			a.Kind, a.Keyword, a.Line = pysource.ArgKind(r.int()), r.str(), r.int()
			a.Start, a.End = r.int(), r.int()
			a.Value = r.expr(0)
		}
	}
	if r.bad || len(r.b) != 0 {
		return nil, errFormat
	}
	return calls, nil
}

const sumSize = len(Sum{})

// reader reads encode's format; after the first fault every read gives a
// zero value and bad stays set.
type reader struct {
	b   string
	bad bool
}

func (r *reader) take(n int) string {
	if r.bad || n > len(r.b) {
		r.bad = true
		return ""
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := uvarint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

// int reads a line number or a kind: a non-negative int.
func (r *reader) int() int {
	v := r.uvarint()
	if v > math.MaxInt32 {
		r.bad = true
		return 0
	}
	return int(v)
}

// count reads the length of a list whose items take at least min bytes
// each, refusing one longer than the bytes left could hold.
func (r *reader) count(min int) int {
	v := r.uvarint()
	if v > uint64(len(r.b)/min) {
		r.bad = true
		return 0
	}
	return int(v)
}

func (r *reader) str() string {
	return r.take(r.count(1))
}

func (r *reader) bool() bool {
	b := r.take(1)
	if len(b) == 1 && b[0] > 1 {
		r.bad = true
	}
	return len(b) == 1 && b[0] == 1
}

func (r *reader) expr(depth int) pysource.Expr {
	if depth > maxDepth {
		r.bad = true
		return pysource.Expr{}
	}
	e := pysource.Expr{Node: r.str()}
	if r.bool() {
		k := &pysource.Constant{Type: r.str()}
		if b := r.take(8); len(b) == 8 {
			k.Num = math.Float64frombits(binary.LittleEndian.Uint64([]byte(b)))
		}
		k.Overflow, k.Str, k.Bool = r.bool(), r.str(), r.bool()
		e.Const = k
	}
	if n := r.count(3); n > 0 { // an expr takes 3 bytes at least
		e.Elems = make([]pysource.Expr, n)
		for i := range e.Elems {
			e.Elems[i] = r.expr(depth + 1)
		}
	}
	return e
}

// uvarint is binary.Uvarint of a string, refusing a value not in its
// shortest form (so that a file decodes only from the bytes encode writes).
func uvarint(s string) (uint64, int) {
	var x uint64
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 || i > 0 && c == 0 {
				return 0, -(i + 1) // an overflow, or not the shortest form
			}
			return x | uint64(c)<<(7*i), i + 1
		}
		x |= uint64(c&0x7f) << (7 * i)
	}
	return 0, 0
}
