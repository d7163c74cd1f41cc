package metricgate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/radixark/miles-ci/policy/pysource"
)

// Identity is the run series a baseline belongs to: runs that differ in any
// of these never share one (RunIdentity).
type Identity struct {
	TestPath string `json:"test_path"`
	Backend  string `json:"backend"`
	Suite    string `json:"suite"`
}

// Coordinate is one value's place in a run: a declaration's literals and
// the step (-1 for a whole-series reduction).
type Coordinate struct {
	Metric        string
	StepsKey      string
	ConstraintKey string
	Step          *big.Int
}

// Baselines answers the gate's one question of a store
// (recent_trusted_values): up to limit values of trusted runs of the
// identity at the coordinate, newest run first.
type Baselines interface {
	Recent(ctx context.Context, id Identity, c Coordinate, limit int) ([]float64, error)
}

// Evaluate is evaluate_gate for one test file: each declaration's
// coordinates judged against the mean of their trusted history (none:
// INACTIVE, a cold start), the file trusted when every coordinate passed or
// was inactive. A file without declarations is trusted without a record.
// rec is the merged record (recErr why there is none); b nil is a store
// with no history. What Python would raise past the gate (an unreadable
// record, a store that fails) is the verdict's Error: no verdict.
func Evaluate(ctx context.Context, f Form, id Identity, specs []Spec, rec *Record, recErr error, b Baselines) FileVerdict {
	v := FileVerdict{Identity: id, Coordinates: []CoordinateVerdict{}}
	if len(specs) == 0 {
		return v.seal()
	}
	if rec == nil {
		if recErr == nil {
			recErr = errors.New("no record")
		}
		return v.failed(recErr)
	}
	for _, s := range specs {
		cs, err := evaluateSpec(ctx, f, id, s, *rec, b)
		if err != nil {
			return v.failed(err)
		}
		v.Coordinates = append(v.Coordinates, cs...)
	}
	return v.seal()
}

func evaluateSpec(ctx context.Context, f Form, id Identity, s Spec, rec Record, b Baselines) ([]CoordinateVerdict, error) {
	errorResult := func(reason string) []CoordinateVerdict {
		return []CoordinateVerdict{{Metric: s.Metric, StepsKey: s.StepsKey, ConstraintKey: s.ConstraintKey, Status: StatusError, Reason: reason}}
	}
	series, ok := rec.series[s.Metric]
	if !ok {
		return errorResult(fmt.Sprintf("required metric %s missing from record", pysource.Repr(s.Metric))), nil
	}
	sels, err := selectValues(series, s.Steps)
	var se *errSelect
	if errors.As(err, &se) {
		return errorResult(fmt.Sprintf("metric %s (steps=%s): %s", pysource.Repr(s.Metric), s.Steps.repr(), se.msg)), nil
	}
	if err != nil {
		return nil, err
	}
	var out []CoordinateVerdict
	for _, sel := range sels {
		var values []float64
		if b != nil {
			values, err = b.Recent(ctx, id, Coordinate{Metric: s.Metric, StepsKey: s.StepsKey, ConstraintKey: s.ConstraintKey, Step: sel.step}, f.HistoryLimit)
			if err != nil {
				return nil, err
			}
		}
		c := CoordinateVerdict{Metric: s.Metric, StepsKey: s.StepsKey, ConstraintKey: s.ConstraintKey,
			Step: sel.step, AtStep: sel.atStep, Current: floatPtr(sel.value), BaselineN: len(values)}
		if len(values) == 0 {
			c.Status, c.Reason = StatusInactive, "ok; historical: cold start (0 trusted baselines)"
		} else {
			mean := pyMean(values)
			lo, hi, pass := s.Constraint.judge(sel.value, mean)
			c.BaselineMean, c.Band = floatPtr(mean), &Band{Lo: Float(lo), Hi: Float(hi)}
			if pass {
				c.Status, c.Reason = StatusPass, "ok"
			} else {
				c.Status = StatusFail
				c.Reason = fmt.Sprintf("historical: cur=%s vs mean=%s (n=%d) outside [%s, %s]", pyG6(sel.value), pyG6(mean), len(values), pyG6(lo), pyG6(hi))
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// pyMean is sum(values) / len(values) as CPython 3.11 computes it: the
// floats added left to right (CPython 3.12's sum compensates, which can
// move the last bit).
func pyMean(values []float64) float64 {
	sum := 0.0
	for _, v := range values {
		sum = float64(sum + v)
	}
	return float64(sum / float64(len(values)))
}

// judge is constraints.py's evaluate_constraint: the band scales from the
// reference only. Each product is rounded on its own (no fused multiply-add),
// as CPython computes it.
func (c Constraint) judge(cur, ref float64) (lo, hi float64, ok bool) {
	up := pyMax(float64(c.RelUp*math.Abs(ref)), c.AbsFloorUp)
	down := pyMax(float64(c.RelDown*math.Abs(ref)), c.AbsFloorDown)
	hi = float64(ref + up)
	lo = float64(ref - down)
	return lo, hi, lo <= cur && cur <= hi
}

// pyMax is Python's max(a, b): b only when it is greater (a NaN first
// argument stays).
func pyMax(a, b float64) float64 {
	if b > a {
		return b
	}
	return a
}

// G6 is a number as the gate's reasons print it: Python's f"{x:.6g}".
func G6(f float64) string { return pyG6(f) }

// pyG6 is Python's f"{x:.6g}".
func pyG6(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

func floatPtr(f float64) *Float {
	v := Float(f)
	return &v
}
