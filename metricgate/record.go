package metricgate

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/radixark/miles-ci/pyjson"
)

// Record is a test file's merged metric record (rules §16): what its
// passing attempt logged, one JSONL line {"metric": KEY, "series": [[step,
// value], ...]} per metric, read as Miles' parse_merged_record reads it (with
// Python's json, pyjson). The record is data the code under test writes:
// every read is bounded and anything Miles' reader would raise on is an
// error, never a guess.
type Record struct {
	// series maps a metric key to its points, each as Python holds it
	// after the reader: a [step, value] list with the value's marker
	// decoded, or the element as written when it is not such a list.
	series map[string][]pyjson.Value
}

// MaxRecordBytes bounds a record miles-ci reads; a merged record of the
// standard metrics over a test's steps is a few kB.
const MaxRecordBytes = 16 << 20

// ErrRecord is a record Miles' gate could not read: evaluate_gate raises
// on it, so the file gets no verdict.
var ErrRecord = errors.New("the metric record cannot be read")

// nonFinite are the string markers capture writes for non-finite values,
// decoded back to floats by the reader.
var nonFinite = map[string]float64{"NaN": math.NaN(), "Infinity": math.Inf(1), "-Infinity": math.Inf(-1)}

// ParseRecord reads a merged record as open(path, encoding="utf-8") and
// parse_merged_record read it: strict UTF-8 and universal newlines, each
// line stripped (str.strip), empty lines skipped, each other line one JSON
// object with "metric" and "series"; a repeated metric keeps its last
// line's series.
func ParseRecord(text string) (Record, error) {
	r := Record{series: map[string][]pyjson.Value{}}
	if len(text) > MaxRecordBytes {
		return Record{}, fmt.Errorf("%w: it is %d bytes, more than the %d miles-ci reads", ErrRecord, len(text), MaxRecordBytes)
	}
	runes, err := pyjson.ReadText([]byte(text))
	if err != nil {
		return Record{}, fmt.Errorf("%w: it is not UTF-8 text (%w)", ErrRecord, err)
	}
	n, start := 0, 0
	for i := 0; i <= len(runes); i++ {
		if i < len(runes) && runes[i] != '\n' {
			continue
		}
		n++
		line := runes[start:i]
		start = i + 1
		for len(line) > 0 && pyjson.IsSpace(line[0]) {
			line = line[1:]
		}
		for len(line) > 0 && pyjson.IsSpace(line[len(line)-1]) {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			continue
		}
		if err := r.addLine(line); err != nil {
			return Record{}, fmt.Errorf("%w: line %d: %w", ErrRecord, n, err)
		}
	}
	return r, nil
}

// addLine is one line of parse_merged_record:
// by_metric[rec["metric"]] = [decode(point) for point in rec["series"]].
func (r Record) addLine(line []rune) error {
	rec, err := pyjson.Decode(line, pyjson.Loose)
	if err != nil {
		return err
	}
	if rec.Kind != pyjson.Dict {
		return fmt.Errorf("a line is a JSON %s, not an object with \"metric\" and \"series\"", typeName(rec))
	}
	series, ok := rec.Dict.Get("series")
	if !ok {
		return errors.New(`a line has no "series"`)
	}
	points, err := iterate(series)
	if err != nil {
		return fmt.Errorf(`"series" %w`, err)
	}
	for i, p := range points {
		if p.Kind == pyjson.List && len(p.List) >= 2 {
			points[i] = pyjson.Value{Kind: pyjson.List, List: []pyjson.Value{p.List[0], decodeMarker(p.List[1])}}
		}
	}
	metric, ok := rec.Dict.Get("metric")
	if !ok {
		return errors.New(`a line has no "metric"`)
	}
	switch metric.Kind {
	case pyjson.List, pyjson.Dict:
		return fmt.Errorf(`"metric" is a %s, which Python cannot use as a key`, typeName(metric))
	case pyjson.Str:
		r.series[metric.Str] = points
	}
	// A metric that is not a string is kept by Python under a key no
	// declaration (always a string) looks up: nothing to keep here.
	return nil
}

// typeName is a value's Python type name, for messages.
func typeName(v pyjson.Value) string {
	return [...]string{"NoneType", "bool", "int", "float", "str", "list", "dict"}[v.Kind]
}

// iterate is `for x in v`: a list's elements, a string's characters, a
// dict's keys; other values are not iterable.
func iterate(v pyjson.Value) ([]pyjson.Value, error) {
	switch v.Kind {
	case pyjson.List:
		return append([]pyjson.Value(nil), v.List...), nil
	case pyjson.Str:
		var out []pyjson.Value
		for _, c := range pyjson.Runes(v.Str) {
			var b strings.Builder
			pyjson.AppendRune(&b, c)
			out = append(out, pyjson.StrValue(b.String()))
		}
		return out, nil
	case pyjson.Dict:
		out := make([]pyjson.Value, v.Dict.Len())
		for i, k := range v.Dict.Keys {
			out[i] = pyjson.StrValue(k)
		}
		return out, nil
	}
	return nil, fmt.Errorf("is a %s, not a list of points", typeName(v))
}

func decodeMarker(v pyjson.Value) pyjson.Value {
	if v.Kind == pyjson.Str {
		if f, ok := nonFinite[v.Str]; ok {
			return pyjson.FloatValue(f)
		}
	}
	return v
}

// Metrics are the record's metric keys, sorted.
func (r Record) Metrics() []string {
	out := make([]string, 0, len(r.series))
	for k := range r.series {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// RecordKey is the folder name Miles' harness gives a test file's records
// (ci_utils._attempt_record_dir): the path with every character but
// [A-Za-z0-9._-] replaced by "_", a dash and the first 10 hex digits of its
// SHA-1. Its attempt N's merged record is KEY/attempt-N.merged.jsonl.
func RecordKey(file string) string {
	sum := sha1.Sum([]byte(file))
	var b strings.Builder
	for _, r := range file {
		if r < 0x80 && (r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + "-" + hex.EncodeToString(sum[:])[:10]
}
