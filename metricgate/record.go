package metricgate

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Record is a test file's merged metric record (rules §16): what its
// passing attempt logged, one JSONL line {"metric": KEY, "series": [[step,
// value], ...]} per metric, read as Miles' parse_merged_record reads it.
// The record is data the code under test writes: every read is bounded and
// anything Miles' reader would raise on is an error, never a guess.
type Record struct {
	// series maps a metric key to its points, each as Python holds it
	// after the reader: a [step, value] list with the value's marker
	// decoded, or the element as written when it is not such a list.
	series map[string][]pyValue
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

// ParseRecord reads a merged record: lines split as Python's text mode
// splits them (universal newlines), each stripped of Python's whitespace,
// empty lines skipped, each other line one JSON object with "metric" and
// "series"; a repeated metric keeps its last line's series.
func ParseRecord(text string) (Record, error) {
	r := Record{series: map[string][]pyValue{}}
	if len(text) > MaxRecordBytes {
		return Record{}, fmt.Errorf("%w: it is %d bytes, more than the %d miles-ci reads", ErrRecord, len(text), MaxRecordBytes)
	}
	if !utf8.ValidString(text) {
		return Record{}, fmt.Errorf("%w: it is not UTF-8 text", ErrRecord)
	}
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimFunc(line, pyIsSpace)
		if line == "" {
			continue
		}
		if err := r.addLine(line); err != nil {
			return Record{}, fmt.Errorf("%w: line %d: %w", ErrRecord, n+1, err)
		}
	}
	return r, nil
}

// pyIsSpace is Python's str.isspace for one character: Unicode White_Space
// and the separators U+001C-U+001F.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// addLine is one line of parse_merged_record:
// by_metric[rec["metric"]] = [decode(point) for point in rec["series"]].
func (r Record) addLine(line string) error {
	rec, err := parsePyJSON(line)
	if err != nil {
		return err
	}
	if rec.kind != pyDict {
		return fmt.Errorf("a line is a JSON %s, not an object with \"metric\" and \"series\"", rec.typeName())
	}
	series, ok := rec.dict.get("series")
	if !ok {
		return errors.New(`a line has no "series"`)
	}
	points, err := iterate(series)
	if err != nil {
		return fmt.Errorf(`"series" %w`, err)
	}
	for i, p := range points {
		if p.kind == pyList && len(p.list) >= 2 {
			points[i] = pyValue{kind: pyList, list: []pyValue{p.list[0], decodeMarker(p.list[1])}}
		}
	}
	metric, ok := rec.dict.get("metric")
	if !ok {
		return errors.New(`a line has no "metric"`)
	}
	switch metric.kind {
	case pyList, pyDict:
		return fmt.Errorf(`"metric" is a %s, which Python cannot use as a key`, metric.typeName())
	case pyStr:
		r.series[metric.s] = points
	}
	// A metric that is not a string is kept by Python under a key no
	// declaration (always a string) looks up: nothing to keep here.
	return nil
}

// iterate is `for x in v`: a list's elements, a string's characters, a
// dict's keys; other values are not iterable.
func iterate(v pyValue) ([]pyValue, error) {
	switch v.kind {
	case pyList:
		return append([]pyValue(nil), v.list...), nil
	case pyStr:
		var out []pyValue
		for _, c := range v.s {
			out = append(out, pyValue{kind: pyStr, s: string(c)})
		}
		return out, nil
	case pyDict:
		out := make([]pyValue, len(v.dict.keys))
		for i, k := range v.dict.keys {
			out[i] = pyValue{kind: pyStr, s: k}
		}
		return out, nil
	}
	return nil, fmt.Errorf("is a %s, not a list of points", v.typeName())
}

func decodeMarker(v pyValue) pyValue {
	if v.kind == pyStr {
		if f, ok := nonFinite[v.s]; ok {
			return pyValue{kind: pyFloat, f: f}
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
